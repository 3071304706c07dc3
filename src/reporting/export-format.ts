/**
 * Exports as CSV (RFC 4180: comma, CRLF, a header row of the field names) or JSON (one array
 * of objects), written batch by batch as the rows arrive, so a month of records never sits in
 * memory. Lists (jobCustomerTags, a failing destination's reasons) are joined with ";" in CSV;
 * null is an empty cell. A cell that a spreadsheet would run as a formula (starting with =, @, a
 * tab or CR, or + or - before something that is no digit) gets a leading apostrophe; fax numbers
 * (+4989…) and negative numbers stay as they are.
 */

export type ExportFormat = "csv" | "json";

export type ExportRow = Record<string, unknown>;

export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text: string;
  if (Array.isArray(value)) text = value.map((v) => (typeof v === "object" && v !== null ? Object.values(v).join(":") : String(v))).join(";");
  else if (typeof value === "object") text = JSON.stringify(value);
  else text = String(value);
  if (/^[=@\t\r]/.test(text) || /^[+-](?![0-9])/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(",")}\r\n`;
}

/** The export's text, piece by piece: header (CSV) or "[" (JSON), the rows of each batch, then the end. */
export async function* formatRows(format: ExportFormat, fields: readonly string[], batches: AsyncIterable<readonly ExportRow[]>): AsyncGenerator<string> {
  if (format === "csv") {
    yield csvLine(fields);
    for await (const batch of batches) {
      if (batch.length > 0) yield batch.map((row) => csvLine(fields.map((f) => row[f]))).join("");
    }
    return;
  }
  yield "[";
  let first = true;
  for await (const batch of batches) {
    if (batch.length === 0) continue;
    const text = batch.map((row) => JSON.stringify(Object.fromEntries(fields.map((f) => [f, row[f] ?? null])))).join(",\n");
    yield first ? `\n${text}` : `,\n${text}`;
    first = false;
  }
  yield "\n]\n";
}
