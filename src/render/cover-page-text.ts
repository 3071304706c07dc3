/**
 * A plain-text cover page built from the default template's fields (the provider's
 * `coverpage-default.ftl.html`: FromName, FromCompanyName, FromTelNum, ToName, ToCompanyName,
 * ToFaxNum, SubjectTitle, SubjectText), laid out like any text page. It stands until the
 * rendering work adds HTML cover templates; it is a real page with real content, so page counts
 * and line times stay honest.
 */
export interface CoverPageFields {
  properties: readonly { key: string; value: string | null }[] | null;
  recipientNumber: string;
  pageCount: number;
}

export function coverPageText(fields: CoverPageFields): string {
  const value = (key: string) => fields.properties?.find((p) => p.key.toLowerCase() === key.toLowerCase())?.value?.trim() ?? "";
  const line = (label: string, text: string) => `${label.padEnd(10)}${text}`;
  return [
    "",
    "                                  T E L E F A X",
    "",
    "=".repeat(80),
    line("To:", [value("ToName"), value("ToCompanyName")].filter(Boolean).join(", ")),
    line("Fax:", value("ToFaxNum") || fields.recipientNumber),
    "",
    line("From:", [value("FromName"), value("FromCompanyName")].filter(Boolean).join(", ")),
    line("Phone:", value("FromTelNum")),
    "",
    line("Pages:", `${fields.pageCount} (including this page)`),
    "=".repeat(80),
    "",
    value("SubjectTitle"),
    "",
    value("SubjectText"),
    "",
  ].join("\n");
}
