/** Report shapes of the contract: FaxReport, JobDeleteReport and the bulk request. */
import { Type, type Static, type TSchema } from "typebox";
import { RecipientPropertySchema } from "./fax-job-request.ts";

const NullableField = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const RecipientStatusSchema = Type.Object({
  number: Type.String({ description: "The primary number as submitted" }),
  alternativeNumbers: NullableField(Type.Array(Type.String())),
  properties: NullableField(Type.Array(RecipientPropertySchema)),
  status: Type.String({ description: "PENDING, OK, BUSY, NOFAX, NOFAX_DIS, NOFAX_TO, RING_TO, REM_DIS, … (docs/failure-reasons.md)" }),
  reason: Type.String({ description: "Explanation of the status" }),
  sentTs: Type.Optional(Type.String({ description: "When the last attempt ended (UTC, seconds); absent until a call was made" })),
  durationInSecs: Type.Integer({ description: "Duration of the last call in seconds" }),
  sentToNumber: Type.Optional(Type.String({ description: "The dialled number that answered (00-style)" })),
  remoteCsid: Type.Optional(Type.String({ description: "Fax id of the receiving machine" })),
});

export const ReferenceEchoSchema = Type.Object({
  customerDefinedId: Type.Optional(Type.String()),
  billingCode: Type.Optional(Type.String()),
  billingInfo: Type.Optional(Type.String()),
});

/** Faxline extension of a report, only with `?view=extended` (SDKs never see it). */
export const FaxlineReportExtensionSchema = Type.Object({
  datacenter: Type.String({ description: "The data center that owns the job now: sends, reports, pushes and purges it" }),
  acceptedDatacenter: Type.String({ description: "The data center that accepted the job (its 201)" }),
  adoptions: Type.Array(
    Type.Object({
      from: Type.String(),
      to: Type.String(),
      at: Type.String({ description: "When the job was adopted (UTC, seconds)" }),
    }),
    { description: "Each time the job moved to the other data center of its region (failover or faxline datacenter adopt)" },
  ),
});
export type FaxlineReportExtension = Static<typeof FaxlineReportExtensionSchema>;

export const FaxReportSchema = Type.Object({
  jobId: Type.String(),
  recipientStatus: Type.Array(RecipientStatusSchema),
  pages: Type.Integer({ description: "Rendered pages per recipient; 0 until rendered" }),
  reference: Type.Optional(ReferenceEchoSchema),
  faxline: Type.Optional(FaxlineReportExtensionSchema),
});
export type FaxReport = Static<typeof FaxReportSchema>;

export const FaxReportsSchema = Type.Object({ reports: Type.Array(FaxReportSchema) });

export const JobDeleteReportSchema = Type.Object({
  jobId: Type.String(),
  deleted: Type.Boolean(),
  reason: Type.Optional(Type.String({ description: "NOT_FOUND or INTERNAL_ERROR when not deleted" })),
});
export type JobDeleteReport = Static<typeof JobDeleteReportSchema>;

export const JobDeleteReportsSchema = Type.Object({ reports: Type.Array(JobDeleteReportSchema) });

export const BulkRequestSchema = Type.Object({
  action: Type.String({ description: "GET or DELETE, any letter case" }),
  jobIds: Type.Array(Type.String(), { maxItems: 1000, description: "At most 1000 job ids" }),
});

export const BulkResponseSchema = Type.Object({
  reports: Type.Array(Type.Union([FaxReportSchema, JobDeleteReportSchema])),
});

export const ApiErrorBodySchema = Type.Object({
  code: Type.Integer({ description: "HTTP status" }),
  error: Type.String({ description: "Stable error identifier (docs/api-errors.md)" }),
  message: Type.String({ description: "What went wrong and how to fix it" }),
});
