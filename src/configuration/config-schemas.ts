/**
 * The configuration API's shapes (TypeBox, so they are validated and in the OpenAPI document),
 * with the provider's field names (Fax Configuration API 2.0; docs/config-api.md). What the
 * provider's pages leave open is marked "Faxline" in the descriptions.
 */
import { Type, type Static, type TSchema } from "typebox";

const Nullable = <T extends TSchema>(schema: T, description?: string) => Type.Union([schema, Type.Null()], description ? { description } : {});
const Optional = <T extends TSchema>(schema: T, description?: string) => Type.Optional(Nullable(schema, description));

export const BooleanText = Type.Union([Type.Literal("true"), Type.Literal("false")]);

export const CustomerQuery = {
  customer: Type.Optional(Type.String({ maxLength: 64, description: "The customer configured: operators name it in every request; a manager's is its own (Faxline)" })),
};

export const PageQuery = {
  limit: Type.Optional(Type.String({ pattern: "^[0-9]{1,6}$", description: "Entries per page (default 100, at most 1000)" })),
  offset: Type.Optional(Type.String({ pattern: "^[0-9]{1,9}$", description: "Entries skipped (default 0)" })),
};

/** Fax-to-email: each received fax mailed to these addresses. */
export const EmailDeliverySchema = Type.Object({
  recipients: Type.Array(Type.String({ maxLength: 320 }), { minItems: 1, maxItems: 50, description: "E-mail addresses each received fax is mailed to" }),
  attachment: Type.Optional(Type.String({ maxLength: 8, description: "PDF (default), TIFF or NONE" })),
});

/** Fax-to-webservice: a signed notice of each received fax posted to this URL. */
export const WebserviceDeliverySchema = Type.Object({
  url: Type.String({ maxLength: 2048, description: "http:// or https:// URL; shown without user info (a URL sent back as shown keeps it)" }),
});

/** Fax-to-FTP: Faxline writes to SFTP servers (docs/notifications.md "Fax-to-SFTP"). */
export const FtpDeliverySchema = Type.Object({
  protocol: Type.Optional(Type.String({ maxLength: 8, description: "SFTP (the only one; read-only)" })),
  host: Type.String({ maxLength: 255 }),
  port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: "Default 22" })),
  username: Type.String({ maxLength: 100 }),
  hostKeys: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 5, description: "Pinned SHA-256 host key fingerprints (SHA256:…, as ssh-keygen -lf prints them)" }),
  directory: Type.Optional(Type.String({ maxLength: 1024, description: "Remote directory; empty: the login's" })),
  filePattern: Type.Optional(Type.String({ maxLength: 200 })),
  documentFormat: Type.Optional(Type.String({ maxLength: 8, description: "PDF (default) or TIFF" })),
  metadataFormat: Type.Optional(Type.String({ maxLength: 8, description: "JSON (default) or XML" })),
  password: Type.Optional(Type.String({ maxLength: 1024, description: "Write-only: log in with this password" })),
  privateKey: Type.Optional(Type.String({ maxLength: 16384, description: "Write-only: log in with this private key (OpenSSH, PEM or PuTTY)" })),
  keyPassphrase: Type.Optional(Type.String({ maxLength: 1024, description: "Write-only: the passphrase of an encrypted privateKey (used once to decrypt it, not kept)" })),
  generateKey: Type.Optional(Type.Boolean({ description: "Write-only: make a new Ed25519 key and log in with it (its publicKey is in the answer)" })),
  authMethod: Type.Optional(Type.String({ maxLength: 16, description: "Read-only: key or password" })),
  publicKey: Type.Optional(Nullable(Type.String(), "Read-only: the public key line for the server's authorized_keys (key logins)")),
  target: Type.Optional(Type.String({ description: "Read-only: sftp://user@host:port/directory" })),
});

/** `ftp` in a change: fields left out keep their values (a new delivery needs host, username, hostKeys and a login); empty secrets are "not given". */
export const FtpDeliveryChangeSchema = Type.Object({
  protocol: Type.Optional(Type.String({ maxLength: 8 })),
  host: Type.Optional(Type.String({ maxLength: 255 })),
  port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  username: Type.Optional(Type.String({ maxLength: 100 })),
  hostKeys: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 5 })),
  directory: Type.Optional(Type.String({ maxLength: 1024 })),
  filePattern: Type.Optional(Type.String({ maxLength: 200 })),
  documentFormat: Type.Optional(Type.String({ maxLength: 8 })),
  metadataFormat: Type.Optional(Type.String({ maxLength: 8 })),
  password: Type.Optional(Type.String({ maxLength: 1024 })),
  privateKey: Type.Optional(Type.String({ maxLength: 16384 })),
  keyPassphrase: Type.Optional(Type.String({ maxLength: 1024 })),
  generateKey: Type.Optional(Type.Boolean()),
  authMethod: Type.Optional(Type.String({ maxLength: 16, description: "key or password: refused when the change does not make the login so" })),
  publicKey: Type.Optional(Nullable(Type.String(), "Read-only, ignored")),
  target: Type.Optional(Type.String({ description: "Read-only, ignored" })),
});

const NumberFields = {
  displayNumber: Optional(Type.String({ maxLength: 32 }), "Shown to users and in reporting instead of the number; null: the number"),
  comments: Optional(Type.String({ maxLength: 1000 })),
  faxId: Optional(Type.String({ maxLength: 20 }), "The fax id (CSID) sent to callers, up to 20 printable ASCII characters; null: inherited"),
  costCenter: Optional(Type.String({ maxLength: 64 }), "null: inherited"),
  active: Optional(Type.Boolean(), "An inactive number answers callers as a wrong number (SIP 404); null: inherited"),
  paused: Optional(Type.Boolean(), "Faxline: a paused number answers callers 480 Temporarily Unavailable, and their fax machines try again later; null: inherited"),
};

export const InboundNumberSchema = Type.Object({
  number: Type.String({ description: "Read-only: the number, E.164" }),
  ...NumberFields,
  profile: Optional(Type.String(), "The profile (Faxline: topic) the number receives into; null: none (callers get a wrong number)"),
  email: Type.Optional(EmailDeliverySchema),
  ftp: Type.Optional(FtpDeliverySchema),
  webservice: Type.Optional(WebserviceDeliverySchema),
});
export type InboundNumberView = Static<typeof InboundNumberSchema>;

/** PUT (all fields; absent is null) and PATCH (only those given) of a number. */
export const InboundNumberChangeSchema = Type.Object(
  {
    number: Type.Optional(Type.String({ maxLength: 40, description: "Ignored when it names the number in the path; refused when it names another" })),
    ...NumberFields,
    profile: Optional(Type.String({ maxLength: 64 }), "Assigns the number to this profile (Faxline: the provider shows it read-only); null: none"),
    email: Type.Optional(Type.Unknown({ description: "Read-only on a number: deliveries belong to its profile" })),
    ftp: Type.Optional(Type.Unknown({ description: "Read-only on a number: deliveries belong to its profile" })),
    webservice: Type.Optional(Type.Unknown({ description: "Read-only on a number: deliveries belong to its profile" })),
  },
  { additionalProperties: false },
);
export type InboundNumberChange = Static<typeof InboundNumberChangeSchema>;

const ProfileFields = {
  comments: Optional(Type.String({ maxLength: 1000 })),
  faxId: Optional(Type.String({ maxLength: 20 }), "The fax id (CSID) sent to callers of the profile's numbers; null: inherited from the customer"),
  costCenter: Optional(Type.String({ maxLength: 64 })),
  active: Optional(Type.Boolean(), "An inactive profile deactivates its numbers"),
  paused: Optional(Type.Boolean(), "Faxline: a paused profile pauses its numbers (callers get 480 Temporarily Unavailable and try again later)"),
  maxWaitingFaxes: Optional(
    Type.Integer({ minimum: 1, maximum: 1000000 }),
    "Faxline: the most received faxes that may wait for the customer (neither acknowledged through the pull API nor delivered by mail, web service or SFTP); while that many wait, callers get 486 Busy Here and try again later. Calls already running may pass it by a few. null: no limit",
  ),
  retentionDays: Optional(Type.Integer({ minimum: 1, maximum: 365 }), "Days received faxes are kept for the pull API (Faxline); null: inbound.retentionDays"),
  email: Optional(EmailDeliverySchema),
  webservice: Optional(WebserviceDeliverySchema),
};

export const InboundProfileSchema = Type.Object({
  name: Type.String({ description: "The profile's name (Faxline: the topic's)" }),
  ...ProfileFields,
  ftp: Optional(FtpDeliverySchema),
  numbers: Type.Array(Type.String(), { description: "Read-only: the numbers assigned to it" }),
});
export type InboundProfileView = Static<typeof InboundProfileSchema>;

export const InboundProfileChangeSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 64, description: "Ignored when it is the name in the path; refused when it is another" })),
    ...ProfileFields,
    ftp: Optional(FtpDeliveryChangeSchema, "Fax-to-SFTP; null removes it. Fields left out keep their values; secrets are write-only"),
    numbers: Type.Optional(Type.Unknown({ description: "Read-only: assign numbers on the number" })),
  },
  { additionalProperties: false },
);
export type InboundProfileChange = Static<typeof InboundProfileChangeSchema>;

const CustomerSettingsFields = {
  faxId: Optional(Type.String({ maxLength: 20 }), "The fax id (CSID) of every number that sets none; null: the trunk's"),
  costCenter: Optional(Type.String({ maxLength: 64 })),
  active: Optional(Type.Boolean(), "false deactivates every profile and number of the customer"),
  paused: Optional(Type.Boolean(), "Faxline: true pauses every profile and number of the customer (callers get 480 Temporarily Unavailable)"),
};

export const InboundSettingsSchema = Type.Object({ customer: Type.String(), ...CustomerSettingsFields });
export type InboundSettingsView = Static<typeof InboundSettingsSchema>;
export const InboundSettingsChangeSchema = Type.Object({ customer: Type.Optional(Type.String({ maxLength: 64 })), ...CustomerSettingsFields }, { additionalProperties: false });
export type InboundSettingsChange = Static<typeof InboundSettingsChangeSchema>;

export const AuditEntrySchema = Type.Object({
  id: Type.String(),
  at: Type.String({ description: "UTC, ISO 8601" }),
  login: Type.String({ description: "Who changed it" }),
  role: Type.String({ description: "manager or operator" }),
  resource: Type.String({ description: "e.g. inbound/numbers, inbound/profiles, inbound/settings" }),
  key: Type.String({ description: "The number, profile or user changed; empty for the customer's settings" }),
  action: Type.String({ description: "create, update or delete" }),
  before: Type.Unknown({ description: "The resource before (null: it did not exist); secrets never shown" }),
  after: Type.Unknown({ description: "The resource after (null: deleted)" }),
});

export const AuditPageSchema = Type.Object({
  entries: Type.Array(AuditEntrySchema),
  limit: Type.Integer(),
  offset: Type.Integer(),
  hasMore: Type.Boolean(),
});
