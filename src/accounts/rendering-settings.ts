/**
 * Per-customer rendering settings, set by operators: the default header line
 * (`faxline accounts set-header`), the default tone mode (`faxline accounts set-tone-mode`), cover page templates and overlays
 * (`faxline templates install --kind cover|overlay --name NAME --file FILE`).
 *
 * Everything is checked when it is installed, so that a job never meets a template that cannot
 * work: a header must parse (the same rules as renderingOptions.header), a cover template must be
 * SVG or HTML with well-formed placeholders, an overlay must be a renderable document type of at
 * most one page's worth (only its first page is used; the render check is the job's).
 */
import type { Kysely } from "kysely";
import type { Database } from "../store/database.ts";
import { AccountError } from "./accounts.ts";
import { requireCustomer } from "./notification-settings.ts";
import { checkCoverTemplate } from "../render/cover/cover-template.ts";
import { parseHeaderTemplate } from "../render/header/header-template.ts";
import { TONE_MODES, type ToneMode } from "../render/fax-image/tone-mode.ts";
import { COVER_CONTENT_TYPES, coverKindOf, storedOverlay } from "../render/installed-templates.ts";

/** Most bytes of an installed overlay document. */
export const MAX_OVERLAY_BYTES = 5 * 1024 * 1024;

/** Sets (or with null removes) the header line used when a job gives none. */
export async function setDefaultHeader(db: Kysely<Database>, custNr: string, header: string | null): Promise<void> {
  await requireCustomer(db, custNr);
  if (header !== null) {
    const parsed = parseHeaderTemplate(header);
    if (!parsed.ok) throw new AccountError(`The header cannot be used: ${parsed.message}`);
  }
  await db.updateTable("customers").set({ default_header: header }).where("cust_nr", "=", custNr).execute();
}

/**
 * Sets (or with null removes) the tone mode used when a job gives no renderingOptions.toneMode;
 * any letter case, as the API takes it. AUTO is what no default means, and is kept as none.
 */
export async function setDefaultToneMode(db: Kysely<Database>, custNr: string, toneMode: string | null): Promise<ToneMode | null> {
  await requireCustomer(db, custNr);
  const mode = toneMode === null ? null : toneMode.trim().toUpperCase();
  if (mode !== null && !(TONE_MODES as readonly string[]).includes(mode)) {
    throw new AccountError(`The tone mode must be one of ${TONE_MODES.join(", ")}, got "${toneMode}"`);
  }
  const stored = mode === "AUTO" ? null : (mode as ToneMode | null);
  await db.updateTable("customers").set({ default_tone_mode: stored }).where("cust_nr", "=", custNr).execute();
  return stored;
}

async function upsertTemplate(
  db: Kysely<Database>,
  row: { cust_nr: string; kind: string; name: string; content_type: string; content: string },
  now: number,
): Promise<void> {
  await db
    .insertInto("customer_templates")
    .values({ ...row, updated_at: now })
    .onConflict((oc) => oc.columns(["cust_nr", "kind", "name"]).doUpdateSet({ content: row.content, content_type: row.content_type, updated_at: now }))
    .execute();
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "" || trimmed.length > 128 || /[\u0000-\u001f]/.test(trimmed)) {
    throw new AccountError(`A template name must be 1 to 128 printable characters, got "${name}"`);
  }
  return trimmed;
}

/**
 * Installs a cover page template under `name` (the value jobs give as
 * renderingOptions.coverpageTemplate; `default` is used when a job names one that is not
 * installed). The file name's extension (.svg, .html, .ftl.html) tells SVG from HTML.
 */
export async function installCoverTemplate(
  db: Kysely<Database>,
  input: { custNr: string; name: string; fileName: string; content: string },
  now: number,
): Promise<{ kind: "svg" | "html"; keys: string[] }> {
  await requireCustomer(db, input.custNr);
  const kind = coverKindOf(input.fileName);
  if (kind === null) throw new AccountError(`A cover template must be an .svg or .html file, got ${input.fileName}`);
  const checked = checkCoverTemplate(input.content);
  if (!checked.ok) throw new AccountError(`The cover template cannot be used: ${checked.message} (line ${checked.line}, column ${checked.column})`);
  await upsertTemplate(db, { cust_nr: input.custNr, kind: "cover", name: checkName(input.name), content_type: COVER_CONTENT_TYPES[kind], content: input.content }, now);
  return { kind, keys: checked.keys };
}

/** Installs an overlay document under `name` (renderingOptions.overlay.name, without path or extension). */
export async function installOverlay(
  db: Kysely<Database>,
  input: { custNr: string; name: string; fileName: string; bytes: Uint8Array },
  now: number,
): Promise<void> {
  await requireCustomer(db, input.custNr);
  if (input.bytes.length === 0 || input.bytes.length > MAX_OVERLAY_BYTES) {
    throw new AccountError(`An overlay document must have 1 to ${MAX_OVERLAY_BYTES} bytes, ${input.fileName} has ${input.bytes.length}`);
  }
  let stored: { contentType: string; content: string };
  try {
    stored = storedOverlay(input.fileName, input.bytes);
  } catch (err) {
    throw new AccountError(`The overlay cannot be used: ${(err as Error).message}`);
  }
  await upsertTemplate(db, { cust_nr: input.custNr, kind: "overlay", name: checkName(input.name), content_type: stored.contentType, content: stored.content }, now);
}
