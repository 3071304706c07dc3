/**
 * The configuration API's mail-to-fax shapes (the provider's "Mail to Fax" and "Mail to Fax
 * Profiles" groups; docs/config-api.md "Mail-to-fax"): a user and a profile carry the groups
 * `general`, `fax`, `dialing`, `reportEmail`, `coverSheet`, `personalization` with the fields of
 * mail-to-fax/settings.ts (the provider's own fields are not public; docs/mail-to-fax.md lists
 * them). Types here; values are checked by checkSettings.
 */
import { Type, type Static, type TSchema } from "typebox";

const Opt = <T extends TSchema>(schema: T, description?: string) => Type.Optional(Type.Union([schema, Type.Null()], description ? { description } : {}));
const group = (fields: Record<string, TSchema>, description: string) => Opt(Type.Object(fields, { additionalProperties: false }), description);

const GeneralFields = {
  active: Opt(Type.Boolean(), "false refuses the senders of this level and below"),
  language: Opt(Type.String({ maxLength: 8 }), "Report mail language when the mail names none: en or de"),
};
const FaxFields = {
  csid: Opt(Type.String({ maxLength: 20 }), "Sender fax id (CSID)"),
  costCenter: Opt(Type.String({ maxLength: 100 }), "The job's billingCode"),
  header: Opt(Type.String({ maxLength: 200 }), "Header line (docs/rendering.md placeholders)"),
  paperFormat: Opt(Type.String({ maxLength: 8 }), "A4 or LETTER"),
  resolution: Opt(Type.String({ maxLength: 8 }), "HIGH or LOW"),
  sendAttachmentsOnly: Opt(Type.Boolean(), "The mail's text is not faxed"),
  suppressBlankPages: Opt(Type.Boolean(), "Blank pages are not faxed: neither an empty mail text nor the blank pages of the attachments (docs/mail-to-fax.md, Blank pages)"),
  blocklist: Opt(Type.Boolean(), "Check the do-not-fax list"),
  isExpress: Opt(Type.Boolean()),
};
const DialingFields = { removePrefix: Opt(Type.String({ maxLength: 4 }), "Digits removed from the start of a number in the address (an outside-line 0)") };
const ReportFields = {
  enabled: Opt(Type.Boolean()),
  onSuccess: Opt(Type.Boolean()),
  onFailure: Opt(Type.Boolean()),
  address: Opt(Type.String({ maxLength: 320 }), "Where reports go; empty: the sender"),
  attachFaxImage: Opt(Type.String({ maxLength: 16 }), "NEVER, SUCCESS_ONLY, FAILURE_ONLY or ALWAYS"),
  imageFormat: Opt(Type.String({ maxLength: 8 }), "PDF or TIFF"),
};
const CoverFields = {
  bodyAs: Opt(Type.String({ maxLength: 16 }), "FIRST_PAGE or COVER_PAGE: where the mail's text goes"),
  template: Opt(Type.String({ maxLength: 100 }), "Installed cover template for COVER_PAGE"),
};
const Personalization = Opt(Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 500 })), "Free key/values; they fill the cover page's placeholders");

const SettingsGroups = {
  fax: group(FaxFields, "Fax settings"),
  dialing: group(DialingFields, "Dialing settings"),
  reportEmail: group(ReportFields, "The report mail"),
  coverSheet: group(CoverFields, "The mail's text as a cover page"),
  personalization: Personalization,
};

const UserGeneral = group(
  {
    ...GeneralFields,
    client: Opt(Type.String({ maxLength: 64 }), "The provider's client; Faxline has none below the customer: default (or absent)"),
    profile: Opt(Type.String({ maxLength: 64 }), "The user's mail-to-fax profile; null: the customer's settings only"),
  },
  "General settings, with the user's profile",
);

export const OutboundUserSchema = Type.Object({
  email: Type.String({ description: "The sender's address (lower case)" }),
  general: UserGeneral,
  ...SettingsGroups,
  hasPin: Type.Boolean({ description: "Read-only (Faxline): the user's mails must carry its PIN in the subject" }),
});
export type OutboundUserView = Static<typeof OutboundUserSchema>;

export const OutboundUserChangeSchema = Type.Object(
  {
    email: Type.Optional(Type.String({ maxLength: 320, description: "Ignored when it is the address in the path; refused when it is another" })),
    general: UserGeneral,
    ...SettingsGroups,
    pin: Opt(Type.String({ maxLength: 12 }), "Write-only (Faxline): 6 to 12 digits the subject must carry as PIN=…; null removes it; absent keeps it"),
    hasPin: Type.Optional(Type.Unknown({ description: "Read-only" })),
  },
  { additionalProperties: false },
);
export type OutboundUserChange = Static<typeof OutboundUserChangeSchema>;

export const OutboundProfileSchema = Type.Object({
  name: Type.String(),
  general: group(GeneralFields, "General settings"),
  ...SettingsGroups,
  users: Type.Integer({ description: "Read-only (Faxline): how many users have this profile" }),
});
export type OutboundProfileView = Static<typeof OutboundProfileSchema>;

export const OutboundProfileChangeSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 64, description: "Ignored when it is the name in the path; refused when it is another" })),
    general: group(GeneralFields, "General settings"),
    ...SettingsGroups,
    users: Type.Optional(Type.Unknown({ description: "Read-only" })),
  },
  { additionalProperties: false },
);
export type OutboundProfileChange = Static<typeof OutboundProfileChangeSchema>;

export const OutboundSettingsSchema = Type.Object({
  customer: Type.String(),
  login: Type.Union([Type.String(), Type.Null()], { description: "Faxline: the login mail-to-fax jobs are booked on (its test flag picks the line); null: mail-to-fax not set up" }),
  general: group(GeneralFields, "General settings"),
  ...SettingsGroups,
  domains: Type.Array(Type.Object({ domain: Type.String(), hasPin: Type.Boolean() }), { description: "Read-only here: the sender domains allowed (PUT /outbound/domains/{domain})" }),
});
export type OutboundSettingsView = Static<typeof OutboundSettingsSchema>;

export const OutboundSettingsChangeSchema = Type.Object(
  {
    customer: Type.Optional(Type.String({ maxLength: 64 })),
    login: Type.String({ maxLength: 128, description: "The customer's login mail-to-fax jobs are booked on" }),
    general: group(GeneralFields, "General settings"),
    ...SettingsGroups,
    domains: Type.Optional(Type.Unknown({ description: "Read-only here" })),
  },
  { additionalProperties: false },
);
export type OutboundSettingsChange = Static<typeof OutboundSettingsChangeSchema>;

export const OutboundDomainSchema = Type.Object({ domain: Type.String(), hasPin: Type.Boolean() });
export const OutboundDomainChangeSchema = Type.Object(
  { pin: Opt(Type.String({ maxLength: 12 }), "Write-only: 6 to 12 digits a sender of the domain may write into the subject (PIN=…) instead of the relay's confirmation; null: none") },
  { additionalProperties: false },
);
