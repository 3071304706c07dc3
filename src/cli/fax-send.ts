/**
 * `faxline fax send FILE... --to NUMBER|SIP-URI [--trunk NAME] [--transport t38|g711] [--ecm on|off] [--max-rate 14400|9600|4800]`:
 * renders the files as `faxline render` does (same pipeline, worker and limits) and sends the fax
 * at once over the SIP line, without the store or the job engine: one call, no retries, no
 * capability cache. It prints how the call goes and, at the end, the outcome with the transfer
 * statistics (or, with --json, one JSON object). Exit code 0 when the fax was delivered, 1 when
 * not, 2 for a request that cannot be placed (no trunk, bad number, bad option).
 *
 * A number is routed like a job's (docs/trunks.md) unless --trunk names the trunk; a SIP URI is
 * called directly (no proxy, no credentials) unless --trunk names a trunk to send it through.
 * The SIP line listens on a free UDP port (not lines.sipPort, which a running node holds) and
 * takes its media ports from lines.mediaPorts.
 */
import type { FaxlineConfig } from "../config/schema.ts";
import { failureReason } from "../errors/failure-reasons.ts";
import type { EngineEvent, FaxBitRateCap } from "../line/fax-engine/engine.ts";
import type { FaxTransport } from "../line/outcomes/call-outcomes.ts";
import { parsePortRange } from "../line/sip-fax-line/media-ports.ts";
import { SendFaxError, SipFaxLine, type SendFaxReport } from "../line/sip-fax-line/sip-fax-line.ts";
import { REGION_NUMBER_CONTEXT } from "../numbers/normalize-number.ts";
import { FaxImageWorker, faxImageFailureDetail, pageThreadsFor, helpersWorthStartingEarly, type FaxImageOutcome } from "../render/fax-image/fax-image-worker.ts";
import { renderInputForFiles, RenderRequestError, type RenderFilesRequest } from "./render-files.ts";

export interface FaxSendRequest {
  files: string[];
  to: string;
  trunk: string | null;
  transport: FaxTransport | null;
  ecm: boolean | null;
  /** Cap the modem rate; null: the first rung's (14 400). */
  maxBitRate: FaxBitRateCap | null;
  render: Omit<RenderFilesRequest, "files" | "out" | "recipient" | "csid">;
  /** Our fax id; null: the trunk's, else sender.csid. */
  csid: string | null;
  properties: Record<string, string>;
  json: boolean;
}

const TRANSPORT_NAMES: Record<FaxTransport, string> = { t38: "T.38", g711: "G.711" };

function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? "" : "s"}`;
}

/** One line per T.30 milestone, for the progress output. */
function describeEvent(event: EngineEvent): string | null {
  const at = `${(event.atSample / 8000).toFixed(1).padStart(6)} s`;
  switch (event.type) {
    case "phaseB":
      return `${at}  T.30 phase B: the receiver's ${event.name}`;
    case "phaseD":
      return `${at}  T.30 phase D: ${event.name}`;
    case "phaseE":
      return `${at}  T.30 phase E: ${event.name} (${event.text})`;
    case "frame":
      return event.name === "DCS" || event.name === "CSI" || event.name === "CFR" || event.name === "FTT" || event.name === "DCN"
        ? `${at}  ${event.direction === "tx" ? "->" : "<-"} ${event.name}`
        : null;
  }
}

function summary(sent: SendFaxReport, pages: number): Record<string, unknown> {
  const { report, route } = sent;
  const s = report.statistics;
  return {
    result: report.outcome.result,
    status: report.outcome.status,
    reasonCode: report.outcome.reasonCode,
    reason: report.outcome.reasonCode === null ? null : failureReason(report.outcome.reasonCode).description,
    retryClass: report.outcome.retryClass,
    rawCause: report.outcome.rawCause,
    trunk: sent.trunk,
    sentToNumber: route.sentToNumber,
    target: route.target,
    csid: route.csid,
    mode: report.mode,
    transport: report.transport,
    t38Refused: report.t38Refused,
    pages,
    pagesDelivered: report.outcome.pagesDelivered,
    remoteCsid: s?.remoteIdent || null,
    bitRate: s?.bitRate ?? null,
    ecm: s?.ecm ?? null,
    encoding: s?.encoding ?? null,
    resolution: s !== null && s.xDpi > 0 ? `${s.xDpi}x${s.yDpi}` : null,
    ecmRetries: s?.ecmRetries ?? null,
    badRows: s?.badRows ?? null,
    t30: report.phaseE === null ? null : { code: report.phaseE.completionCode, name: report.phaseE.name, text: report.phaseE.text },
    sip: report.sip,
    setupMs: report.setupMs,
    durationSecs: report.durationSecs,
    engineSeconds: Math.round(report.engineSeconds * 10) / 10,
    wallMs: Math.round(report.wallMs),
    media: report.media,
  };
}

function printSummary(sent: SendFaxReport, pages: number): void {
  const sum = summary(sent, pages);
  const { report } = sent;
  const s = report.statistics;
  const lines: [string, string][] = [
    ["result", `${report.outcome.status}${report.outcome.result === "delivered" ? " (delivered)" : ` (${report.outcome.reasonCode}: ${sum.reason})`}`],
    ["pages", `${report.outcome.pagesDelivered} of ${pages} confirmed`],
    ["dialled", `${sent.route.sentToNumber}${sent.trunk ? ` over trunk ${sent.trunk}` : " (direct)"}`],
    ["remote CSID", s?.remoteIdent || "(none)"],
    [
      "transport",
      report.transport === null
        ? "(no fax exchange)"
        : `${TRANSPORT_NAMES[report.transport]}${report.t38Refused ? " (T.38 refused, fell back)" : ""}, ECM ${s?.ecm ? "on" : "off"}`,
    ],
  ];
  if (s !== null && s.bitRate > 0 && report.transport !== null) {
    lines.push(["line", `${s.bitRate} bit/s, ${s.encoding}${s.xDpi > 0 ? `, ${s.xDpi}x${s.yDpi} dpi` : ""}, ECM retries ${s.ecmRetries}, bad rows ${s.badRows}`]);
  }
  if (report.phaseE !== null) lines.push(["T.30", `${report.phaseE.name}: ${report.phaseE.text}`]);
  if (report.outcome.rawCause !== null) lines.push(["cause", report.outcome.rawCause]);
  if (report.outcome.retryClass !== null) lines.push(["retry class", report.outcome.retryClass]);
  lines.push(["SIP", report.sip.result === "completed" ? `completed, ended by ${report.sip.endedBy}, answered after ${report.sip.setupMs} ms` : `failed: ${report.sip.sipStatus ?? ""} ${report.sip.reasonPhrase} (${report.sip.cause})`]);
  lines.push(["duration", `${report.durationSecs} s call time, ${(report.wallMs / 1000).toFixed(1)} s wall`]);
  for (const [k, v] of lines) console.log(`  ${k.padEnd(12)} ${v}`);
}

/** Renders and sends; returns the exit code. */
export async function faxSend(config: FaxlineConfig, request: FaxSendRequest): Promise<number> {
  if (config.lines.trunks.length === 0 && !/^sip:/i.test(request.to.trim())) {
    console.error("faxline: no trunks are configured (lines.trunksFile), so only a SIP URI can be called directly: --to sip:…");
    return 2;
  }
  const range = parsePortRange(config.lines.mediaPorts);
  if ("error" in range) {
    console.error(`faxline: lines.mediaPorts: ${range.error}`);
    return 2;
  }
  let input;
  try {
    input = renderInputForFiles(
      config,
      {
        ...request.render,
        files: request.files,
        out: "",
        recipient: { number: /^sip:/i.test(request.to) ? "" : request.to, properties: request.properties },
        csid: request.csid ?? config.sender.csid,
      },
      Date.now(),
    );
  } catch (err) {
    if (!(err instanceof RenderRequestError)) throw err;
    console.error(`faxline: ${err.message}`);
    return 2;
  }
  const log = (text: string): void => {
    if (!request.json) console.log(text);
  };

  const worker = new FaxImageWorker({ timeoutMs: config.render.timeout, memoryLimitMb: config.render.workerMemory, pdfRenderer: config.render.pdfRenderer, pageThreads: pageThreadsFor(config.render.pageThreads, 1), startHelpersEarly: helpersWorthStartingEarly(input.documents) });
  let rendered: FaxImageOutcome;
  try {
    rendered = await worker.render(input);
  } finally {
    await worker.close();
  }
  if (!rendered.ok) {
    console.error(`faxline: ${failureReason("render_failed").description}: ${faxImageFailureDetail(rendered)}`);
    return 1;
  }
  if (!rendered.result.ok) {
    console.error(`faxline: ${failureReason(rendered.result.reasonCode).description}: ${rendered.result.message}`);
    return 1;
  }
  const image = rendered.result.images[0];
  if (image === undefined) throw new Error("rendering gave no fax image");
  log(`Rendered ${plural(image.pageSizes.length, "page")} (${request.render.paperFormat} ${request.render.resolution}, ${image.tiff.length} bytes)`);

  const line = new SipFaxLine({
    trunks: config.lines.trunks,
    region: REGION_NUMBER_CONTEXT[config.node.region],
    localAddress: config.lines.localAddress,
    advertisedAddress: config.lines.advertisedAddress,
    dnsServers: config.lines.dnsServers,
    sipPort: 0,
    mediaPorts: range,
    clockSpeed: config.lines.clockSpeed,
    capabilityMaxAgeMs: config.lines.capabilityMaxAge,
    capabilities: null,
    // One call, in this process: no media process to start for it.
    mediaProcess: false,
  });
  const controller = new AbortController();
  const onSignal = (): void => controller.abort(new Error("interrupted"));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    let sent: SendFaxReport;
    try {
      sent = await line.send({
        to: request.to,
        trunk: request.trunk,
        transport: request.transport,
        ecm: request.ecm,
        maxBitRate: request.maxBitRate,
        csid: request.csid,
        defaultCsid: config.sender.csid,
        image: image.tiff,
        pageSizes: image.pageSizes,
        signal: controller.signal,
        onProgress: (what) => log(`  ${what}`),
        onEngineEvent: (event) => {
          const text = describeEvent(event);
          if (text !== null) log(`  ${text}`);
        },
      });
    } catch (err) {
      if (err instanceof SendFaxError) {
        console.error(`faxline: ${err.message}`);
        return 2;
      }
      if (controller.signal.aborted) {
        console.error("faxline: interrupted; the call was hung up");
        return 1;
      }
      throw err;
    }
    if (request.json) console.log(JSON.stringify(summary(sent, image.pageSizes.length), null, 2));
    else printSummary(sent, image.pageSizes.length);
    return sent.report.outcome.result === "delivered" ? 0 : 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await line.close();
  }
}
