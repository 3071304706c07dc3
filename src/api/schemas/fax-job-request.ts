/**
 * The send request (`FaxJobRequest`) of the contract, as a TypeBox schema: it types the route,
 * documents it in /openapi.json, and is checked by Fastify's validator for structure (types,
 * required fields, lengths, the document-name pattern).
 *
 * Leniency the real SDKs need: every optional field also accepts an explicit `null` (the Java
 * SDK serialises nulls), enumerations are plain strings here and are matched case-insensitively
 * by api/fax-job-intake.ts (`Letter`, `WINDOWS-1252`, `utf-8`, `OAUTH`), unknown fields are
 * ignored, and `reportPurgeTs` is accepted in any form (Go sends `0001-01-01T00:00:00+0000`).
 */
import { Type, type Static, type TSchema } from "typebox";

const Nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

export const DOCUMENT_NAME_PATTERN = "^[a-zA-Z0-9._-]+$";

/** Bounds of a recipient's properties: each is stored with the job and repeated in every report and push. */
export const MAX_RECIPIENT_PROPERTIES = 50;
export const MAX_PROPERTY_KEY_LENGTH = 100;
export const MAX_PROPERTY_VALUE_LENGTH = 2000;

export const RecipientPropertySchema = Type.Object({
  key: Type.String({ maxLength: MAX_PROPERTY_KEY_LENGTH, description: "Name of the key, e.g. ToName" }),
  value: Type.Union([Type.String({ maxLength: MAX_PROPERTY_VALUE_LENGTH }), Type.Null()], { description: "Value filled into the cover page" }),
});

export const FaxRecipientSchema = Type.Object({
  number: Type.String({
    minLength: 1,
    description: "Fax number in international format (+4989…, 004989…); spaces, dashes and (0) are accepted",
  }),
  alternativeNumbers: Nullable(
    Type.Array(Type.String({ minLength: 1 }), { maxItems: 10, description: "Numbers tried when the primary fails" }),
  ),
  properties: Nullable(Type.Array(RecipientPropertySchema, { maxItems: MAX_RECIPIENT_PROPERTIES, description: "Personalised data for the cover page" })),
});

export const DocumentSchema = Type.Object({
  name: Type.String({
    minLength: 1,
    maxLength: 32,
    pattern: DOCUMENT_NAME_PATTERN,
    description: "File name (at most 32 characters of a-zA-Z0-9-_.); its extension determines the type",
  }),
  charset: Nullable(
    Type.String({ description: "For .txt: US-ASCII, UTF-8 (default), UTF-16, UTF-16BE, UTF-16LE, ISO-8859-1, Windows-1252" }),
  ),
  reference: Nullable(Type.String({ description: "URL Faxline fetches the document from, instead of data" })),
  data: Nullable(Type.String({ description: "The document, base64-encoded" })),
});

export const JobReferenceSchema = Type.Object({
  customerDefinedId: Nullable(Type.String({ maxLength: 256 })),
  billingCode: Nullable(Type.String({ maxLength: 80 })),
  billingInfo: Nullable(Type.String({ maxLength: 80 })),
});

export const FaxJobRequestSchema = Type.Object(
  {
    reference: Nullable(JobReferenceSchema),
    recipients: Type.Array(FaxRecipientSchema, { description: "At least one recipient" }),
    documents: Nullable(Type.Array(DocumentSchema)),
    transportOptions: Nullable(
      Type.Object({
        csid: Nullable(Type.String({ maxLength: 20, description: "Sender fax id, at most 20 characters" })),
        isExpress: Nullable(Type.Boolean({ description: "Express jobs are dialled before others" })),
        isBlacklistEnabled: Nullable(Type.Boolean({ description: "Check recipients against the do-not-fax list" })),
      }),
    ),
    renderingOptions: Nullable(
      Type.Object({
        paperFormat: Nullable(Type.String({ description: "A4 (default) or LETTER, any letter case" })),
        resolution: Nullable(Type.String({ description: "HIGH (default, 204x196) or LOW (204x98)" })),
        coverpageTemplate: Nullable(Type.String({ maxLength: 256 })),
        overlay: Nullable(
          Type.Object({
            name: Type.String({ maxLength: 256 }),
            mode: Nullable(Type.String({ description: "ALL_PAGES, FIRST_PAGE, LAST_PAGE, … or NO_OVERLAY" })),
          }),
        ),
        header: Nullable(Type.String({ maxLength: 1000, description: "Header line with % placeholders" })),
        toneMode: Nullable(
          Type.String({
            description:
              "Faxline extension: how pages become black and white. AUTO (default, unless the account sets another): text thresholded, pictures screened; TEXT: every page as text; PHOTO: every page screened; THRESHOLD: a plain threshold, no screening",
          }),
        ),
      }),
    ),
    statusReportOptions: Nullable(
      Type.Object({
        reportPurgeTs: Nullable(Type.String({ description: "Accepted and ignored, as by the provider" })),
        reportMail: Nullable(
          Type.Object({
            successAddress: Nullable(Type.String({ maxLength: 320 })),
            failureAddress: Nullable(Type.String({ maxLength: 320 })),
            attachedFaxImageMode: Nullable(Type.String({ description: "NEVER, SUCCESS_ONLY, FAILURE_ONLY, ALWAYS" })),
            attachedFaxImageFormat: Nullable(Type.String({ description: "TIFF, PDF, PDF_WITH_OCR" })),
          }),
        ),
        httpStatusPush: Nullable(
          Type.Object({
            targetUrl: Nullable(Type.String({ maxLength: 2048 })),
            principal: Nullable(Type.String()),
            credentials: Nullable(Type.String()),
            authMethod: Nullable(Type.String({ description: "NONE, HTTP_BASIC, HTTP_DIGEST, OAUTH2 (or OAUTH)" })),
          }),
        ),
      }),
    ),
    meta: Nullable(
      Type.Object({
        customerReference: Nullable(Type.String({ maxLength: 256 })),
        jobValid: Nullable(
          Type.Object({
            start: Nullable(Type.String({ description: "ISO-8601 timestamp with time zone" })),
            end: Nullable(Type.String({ description: "ISO-8601 timestamp, or a duration from start such as PT80M" })),
          }),
        ),
      }),
    ),
  },
  { description: "A fax job: documents sent to one or more recipients" },
);
export type FaxJobRequest = Static<typeof FaxJobRequestSchema>;

export const FaxJobResponseSchema = Type.Object({ jobId: Type.String({ description: "FJ + 20 characters" }) });
