/**
 * A chart's data as CSV, the way the reporting exports write it (RFC 4180: comma, CRLF, a header
 * row of field names, no thousands separators, "." as the decimal point, null as an empty cell),
 * so that a chart's file and the export of the same query read alike. A cell a spreadsheet would
 * run as a formula (=, @, tab, CR, or + or - before something that is no digit) gets a leading
 * apostrophe; fax numbers (+4989…) stay as they are.
 */

export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (/^[=@\t\r]/.test(text) || /^[+-](?![0-9])/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(columns: readonly string[], rows: readonly (readonly (string | number | null | undefined)[])[]): string {
  return [columns, ...rows].map((r) => `${r.map(csvCell).join(",")}\r\n`).join("");
}
