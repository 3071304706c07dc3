/**
 * What a job's rendering needs besides its documents, gathered from the store: the header line
 * (the job's, else the account's default header), the tone mode (the job's, else the account's
 * default, else AUTO; the scheduler keeps the one used with the rendered job), whether blank
 * pages are left out (jobs.suppress_blank_pages), the cover page template, the overlay document, the recipients with their properties, and the limits from config.
 *
 * Cover templates (`renderingOptions.coverpageTemplate`) are looked up among the customer's
 * installed templates of kind `cover` by name; as the contract says, a name that is not found
 * falls back to the customer's template named `default`, and then to the built-in default cover
 * page. Overlays (`renderingOptions.overlay.name`) must be installed (intake refuses unknown
 * names); one removed since the job was accepted fails the job with document_unreadable.
 */
import { toneModeOf, type ToneMode } from "../render/fax-image/tone-mode.ts";
import type { FailureReasonCode } from "../errors/failure-reasons.ts";
import type { FaxlineConfig } from "../config/schema.ts";
import type { OverlayMode } from "../render/overlay/overlay-pages.ts";
import type { FaxJobRenderInput } from "../render/render-fax-job.ts";
import { coverTemplateKind, overlayDocument } from "../render/installed-templates.ts";
import type { Kysely } from "kysely";
import type { Database, JobRow } from "../store/database.ts";
import type { NodeContext } from "../roles/node-context.ts";

export type RenderSetup =
  | { ok: true; input: Omit<FaxJobRenderInput, "documents"> }
  | { ok: false; reasonCode: FailureReasonCode; message: string };

/** The limits of a render from config. */
export function renderLimits(config: FaxlineConfig): FaxJobRenderInput["limits"] {
  return { maxPages: config.jobs.maxPages, maxSourcePixels: config.render.maxSourcePixels, converterTimeoutMs: config.render.converterTimeout };
}

/** Properties as the API stores them ([{key, value}]) as a record; null values become "". */
export function propertiesRecord(json: string | null): Record<string, string> {
  const list = json === null ? [] : (JSON.parse(json) as { key: string; value: string | null }[] | null) ?? [];
  return Object.fromEntries(list.map((p) => [p.key, p.value ?? ""]));
}

/** What a render needs to know about a job (a stored one, or a request being previewed). */
export interface RenderSpec {
  custNr: string;
  paperFormat: "A4" | "LETTER";
  resolution: "HIGH" | "LOW";
  /** renderingOptions.header; null: the account's default header, if any. */
  header: string | null;
  csid: string | null;
  coverpageTemplate: string | null;
  overlay: { name: string; mode: string } | null;
  /** renderingOptions.toneMode; null: the customer's default tone mode, else AUTO. */
  toneMode: ToneMode | null;
  /** Leave blank document pages out (jobs.suppress_blank_pages; mail-to-fax only). */
  suppressBlankPages: boolean;
  recipients: { id: string; number: string; properties: Record<string, string> }[];
}

/** The setup of a stored job. */
export async function renderSetup(ctx: NodeContext, job: JobRow): Promise<RenderSetup> {
  const recipients = await ctx.store.db
    .selectFrom("recipients")
    .select(["id", "number", "properties"])
    .where("job_id", "=", job.id)
    .orderBy("ordinal")
    .execute();
  return renderSetupFor(ctx.store.db, ctx.config, ctx.clock.now(), {
    custNr: job.cust_nr,
    paperFormat: job.paper_format as "A4" | "LETTER",
    resolution: job.resolution as "HIGH" | "LOW",
    header: job.header,
    csid: job.csid,
    coverpageTemplate: job.coverpage_template,
    overlay: job.overlay_name !== null && job.overlay_mode !== null ? { name: job.overlay_name, mode: job.overlay_mode } : null,
    toneMode: job.tone_mode === null ? null : toneModeOf(job.tone_mode),
    suppressBlankPages: job.suppress_blank_pages === 1,
    recipients: recipients.map((r) => ({ id: r.id, number: r.number, properties: propertiesRecord(r.properties) })),
  });
}

export async function renderSetupFor(db: Kysely<Database>, config: FaxlineConfig, now: number, spec: RenderSpec): Promise<RenderSetup> {
  const customer = await db.selectFrom("customers").select(["default_header", "default_tone_mode"]).where("cust_nr", "=", spec.custNr).executeTakeFirst();
  const headerText = spec.header ?? customer?.default_header ?? null;
  const toneMode = spec.toneMode ?? toneModeOf(customer?.default_tone_mode ?? null);

  let cover: FaxJobRenderInput["cover"] = null;
  if (spec.coverpageTemplate !== null) {
    const installed = await db
      .selectFrom("customer_templates")
      .select(["name", "content_type", "content"])
      .where("cust_nr", "=", spec.custNr)
      .where("kind", "=", "cover")
      .where("name", "in", [spec.coverpageTemplate, "default"])
      .execute();
    const template = installed.find((t) => t.name === spec.coverpageTemplate) ?? installed.find((t) => t.name === "default");
    cover = {
      kind: template ? coverTemplateKind(template.content_type) : "svg",
      content: template?.content ?? null,
      time: now,
      timeZone: config.render.defaultTimeZone,
    };
  }

  let overlay: FaxJobRenderInput["overlay"] = null;
  if (spec.overlay !== null && spec.overlay.mode !== "NO_OVERLAY") {
    const installed = await db
      .selectFrom("customer_templates")
      .select(["name", "content_type", "content"])
      .where("cust_nr", "=", spec.custNr)
      .where("kind", "=", "overlay")
      .where("name", "=", spec.overlay.name)
      .executeTakeFirst();
    if (!installed) {
      return {
        ok: false,
        reasonCode: "document_unreadable",
        message: `The overlay "${spec.overlay.name}" is no longer installed for customer ${spec.custNr}`,
      };
    }
    overlay = { document: overlayDocument(installed), mode: spec.overlay.mode as OverlayMode };
  }

  return {
    ok: true,
    input: {
      paperFormat: spec.paperFormat,
      resolution: spec.resolution,
      header: headerText === null ? null : { template: headerText, csid: spec.csid ?? config.sender.csid, timeZone: config.render.defaultTimeZone, time: now },
      cover,
      overlay,
      recipients: spec.recipients,
      toneMode,
      suppressBlankPages: spec.suppressBlankPages,
      limits: renderLimits(config),
      preflight: { lineBitsPerSecond: 14_400, largePageSeconds: config.render.largePageSeconds },
    },
  };
}
