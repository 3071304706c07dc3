/**
 * The built-in status mail templates, used for every part a customer has no template of its own
 * for. One set serves both kinds of mail (`isSuccess` / `isFailure` pick the wording); the names
 * they use are listed in compose-status-mail.ts (StatusMailTemplateData) and
 * docs/notifications-email.md. The subject's line breaks and runs of spaces become one space.
 */

/** A customer's own templates; a part left out uses the built-in template. */
export interface StatusMailTemplates {
  subject?: string;
  text?: string;
  html?: string;
}

const SUBJECT =
  "{{#isSuccess}}Fax delivered{{/isSuccess}}{{#isFailure}}Fax not delivered{{/isFailure}}" +
  "{{#partial}} to {{coveredCount}} of {{recipientCount}} recipients{{/partial}}: " +
  "{{#reference.customerDefinedId}}{{.}}, {{/reference.customerDefinedId}}job {{jobId}}";

const TEXT = `{{#isSuccess}}
Your fax was delivered{{#partial}} to {{coveredCount}} of its {{recipientCount}} recipients{{/partial}}.
{{/isSuccess}}
{{#isFailure}}
Your fax could not be delivered{{#partial}} to {{coveredCount}} of its {{recipientCount}} recipients{{/partial}}.
{{/isFailure}}

Job ID:           {{jobId}}
{{#reference.customerDefinedId}}
Your ID:          {{.}}
{{/reference.customerDefinedId}}
{{#reference.billingCode}}
Billing code:     {{.}}
{{/reference.billingCode}}
{{#reference.billingInfo}}
Billing info:     {{.}}
{{/reference.billingInfo}}
{{#jobReference}}
Job reference:    {{.}}
{{/jobReference}}
Pages:            {{pages}}
Reported at:      {{eventTS}}

{{#recipients}}
Recipient {{number}}
  Status:         {{status}}
  Reason:         {{reason}}
{{#sentToNumber}}
  Sent to:        {{.}}
{{/sentToNumber}}
  Sent at:        {{#sentTS}}{{.}}{{/sentTS}}{{^sentTS}}not dialled{{/sentTS}}
  Duration:       {{durationInSecs}} s
  Pages sent:     {{pagesSent}}
{{#remoteCsid}}
  Remote CSID:    {{.}}
{{/remoteCsid}}
{{#properties}}
  {{key}}: {{value}}
{{/properties}}

{{/recipients}}
{{#notes}}
Note: {{.}}

{{/notes}}
-- 
Faxline status report for customer {{custNr}}. Times are UTC.
`;

const HTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{#isSuccess}}Fax delivered{{/isSuccess}}{{#isFailure}}Fax not delivered{{/isFailure}}: job {{jobId}}</title>
</head>
<body style="font-family: Arial, Helvetica, sans-serif; font-size: 14px; color: #222222;">
{{#isSuccess}}
<p style="font-size: 16px; font-weight: bold; color: #1b6e20;">Your fax was delivered{{#partial}} to {{coveredCount}} of its {{recipientCount}} recipients{{/partial}}.</p>
{{/isSuccess}}
{{#isFailure}}
<p style="font-size: 16px; font-weight: bold; color: #b3261e;">Your fax could not be delivered{{#partial}} to {{coveredCount}} of its {{recipientCount}} recipients{{/partial}}.</p>
{{/isFailure}}
<table cellpadding="3" cellspacing="0" style="border-collapse: collapse;">
<tr><th align="left">Job ID</th><td>{{jobId}}</td></tr>
{{#reference.customerDefinedId}}
<tr><th align="left">Your ID</th><td>{{.}}</td></tr>
{{/reference.customerDefinedId}}
{{#reference.billingCode}}
<tr><th align="left">Billing code</th><td>{{.}}</td></tr>
{{/reference.billingCode}}
{{#reference.billingInfo}}
<tr><th align="left">Billing info</th><td>{{.}}</td></tr>
{{/reference.billingInfo}}
{{#jobReference}}
<tr><th align="left">Job reference</th><td>{{.}}</td></tr>
{{/jobReference}}
<tr><th align="left">Pages</th><td>{{pages}}</td></tr>
<tr><th align="left">Reported at</th><td>{{eventTS}}</td></tr>
</table>
<table cellpadding="4" cellspacing="0" border="1" style="border-collapse: collapse; border-color: #cccccc; margin-top: 12px;">
<tr><th>Number</th><th>Status</th><th>Reason</th><th>Sent at</th><th>Duration</th><th>Pages sent</th><th>Remote CSID</th><th>Properties</th></tr>
{{#recipients}}
<tr>
<td>{{number}}{{#sentToNumber}}<br><small>sent to {{.}}</small>{{/sentToNumber}}</td>
<td>{{status}}</td>
<td>{{reason}}</td>
<td>{{#sentTS}}{{.}}{{/sentTS}}{{^sentTS}}not dialled{{/sentTS}}</td>
<td align="right">{{durationInSecs}}&nbsp;s</td>
<td align="right">{{pagesSent}}</td>
<td>{{remoteCsid}}</td>
<td>{{#properties}}{{key}}: {{value}}<br>{{/properties}}</td>
</tr>
{{/recipients}}
</table>
{{#notes}}
<p><strong>Note:</strong> {{.}}</p>
{{/notes}}
<p style="font-size: 12px; color: #777777;">Faxline status report for customer {{custNr}}. Times are UTC.</p>
</body>
</html>
`;

export const DEFAULT_STATUS_MAIL_TEMPLATES: Required<StatusMailTemplates> = { subject: SUBJECT, text: TEXT, html: HTML };

// German: the same data and layout, for mail-to-fax senders who write in German
// (mail-to-fax/mail-origin.ts picks the language; docs/mail-to-fax.md "Reports").
const SUBJECT_DE =
  "{{#isSuccess}}Fax zugestellt{{/isSuccess}}{{#isFailure}}Fax nicht zugestellt{{/isFailure}}" +
  "{{#partial}} an {{coveredCount}} von {{recipientCount}} Empfängern{{/partial}}: " +
  "{{#reference.customerDefinedId}}{{.}}, {{/reference.customerDefinedId}}Auftrag {{jobId}}";

const TEXT_DE = `{{#isSuccess}}
Ihr Fax wurde zugestellt{{#partial}}, an {{coveredCount}} seiner {{recipientCount}} Empfänger{{/partial}}.
{{/isSuccess}}
{{#isFailure}}
Ihr Fax konnte nicht zugestellt werden{{#partial}}, an {{coveredCount}} seiner {{recipientCount}} Empfänger{{/partial}}.
{{/isFailure}}

Auftrag:          {{jobId}}
{{#reference.customerDefinedId}}
Ihre Kennung:     {{.}}
{{/reference.customerDefinedId}}
{{#reference.billingCode}}
Kostenstelle:     {{.}}
{{/reference.billingCode}}
{{#reference.billingInfo}}
Abrechnung:       {{.}}
{{/reference.billingInfo}}
{{#jobReference}}
Betreff:          {{.}}
{{/jobReference}}
Seiten:           {{pages}}
Gemeldet um:      {{eventTS}}

{{#recipients}}
Empfänger {{number}}
  Status:         {{status}}
  Grund:          {{reason}}
{{#sentToNumber}}
  Gewählt:        {{.}}
{{/sentToNumber}}
  Gesendet um:    {{#sentTS}}{{.}}{{/sentTS}}{{^sentTS}}nicht gewählt{{/sentTS}}
  Dauer:          {{durationInSecs}} s
  Seiten gesendet: {{pagesSent}}
{{#remoteCsid}}
  Gegenstelle:    {{.}}
{{/remoteCsid}}
{{#properties}}
  {{key}}: {{value}}
{{/properties}}

{{/recipients}}
{{#notes}}
Hinweis: {{.}}

{{/notes}}
-- 
Faxline-Statusbericht für Kunde {{custNr}}. Zeiten in UTC.
`;

const HTML_DE = HTML.replace('<html lang="en">', '<html lang="de">')
  .replace("{{#isSuccess}}Fax delivered{{/isSuccess}}{{#isFailure}}Fax not delivered{{/isFailure}}: job {{jobId}}", "{{#isSuccess}}Fax zugestellt{{/isSuccess}}{{#isFailure}}Fax nicht zugestellt{{/isFailure}}: Auftrag {{jobId}}")
  .replace(
    "Your fax was delivered{{#partial}} to {{coveredCount}} of its {{recipientCount}} recipients{{/partial}}.",
    "Ihr Fax wurde zugestellt{{#partial}}, an {{coveredCount}} seiner {{recipientCount}} Empfänger{{/partial}}.",
  )
  .replace(
    "Your fax could not be delivered{{#partial}} to {{coveredCount}} of its {{recipientCount}} recipients{{/partial}}.",
    "Ihr Fax konnte nicht zugestellt werden{{#partial}}, an {{coveredCount}} seiner {{recipientCount}} Empfänger{{/partial}}.",
  )
  .replace("<th align=\"left\">Job ID</th>", "<th align=\"left\">Auftrag</th>")
  .replace("<th align=\"left\">Your ID</th>", "<th align=\"left\">Ihre Kennung</th>")
  .replace("<th align=\"left\">Billing code</th>", "<th align=\"left\">Kostenstelle</th>")
  .replace("<th align=\"left\">Billing info</th>", "<th align=\"left\">Abrechnung</th>")
  .replace("<th align=\"left\">Job reference</th>", "<th align=\"left\">Betreff</th>")
  .replace("<th align=\"left\">Pages</th>", "<th align=\"left\">Seiten</th>")
  .replace("<th align=\"left\">Reported at</th>", "<th align=\"left\">Gemeldet um</th>")
  .replace(
    "<tr><th>Number</th><th>Status</th><th>Reason</th><th>Sent at</th><th>Duration</th><th>Pages sent</th><th>Remote CSID</th><th>Properties</th></tr>",
    "<tr><th>Nummer</th><th>Status</th><th>Grund</th><th>Gesendet um</th><th>Dauer</th><th>Seiten gesendet</th><th>Gegenstelle</th><th>Merkmale</th></tr>",
  )
  .replace("<small>sent to {{.}}</small>", "<small>gewählt: {{.}}</small>")
  .replace("{{^sentTS}}not dialled{{/sentTS}}", "{{^sentTS}}nicht gewählt{{/sentTS}}")
  .replace("<strong>Note:</strong>", "<strong>Hinweis:</strong>")
  .replace("Faxline status report for customer {{custNr}}. Times are UTC.", "Faxline-Statusbericht für Kunde {{custNr}}. Zeiten in UTC.");

export const DEFAULT_STATUS_MAIL_TEMPLATES_DE: Required<StatusMailTemplates> = { subject: SUBJECT_DE, text: TEXT_DE, html: HTML_DE };

/** The built-in templates of a report language (English for any other). */
export function defaultStatusMailTemplates(language: string): Required<StatusMailTemplates> {
  return language === "de" ? DEFAULT_STATUS_MAIL_TEMPLATES_DE : DEFAULT_STATUS_MAIL_TEMPLATES;
}
