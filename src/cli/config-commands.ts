/**
 * `faxline config …`: the configuration API (docs/config-api.md) from the command line, through a
 * running node with @faxline/client (FaxlineConfiguration), as any client would use it: the
 * same checks, tenancy and audit log. The node, credentials and errors as for `faxline send`
 * (--url, else FAXLINE_API_URL, else this machine's http.port; --customer, --login, --password or
 * FAXLINE_API_CUSTOMER, _LOGIN, _PASSWORD). `--customer` is the customer configured: a
 * manager's own, any for an operator.
 *
 *   faxline config numbers [--prefix P] [--assigned true|false] [--active true|false] [--cost-center C] [--inherit] [--limit N] [--offset N] [--json]
 *   faxline config number show NUMBER [--inherit] [--json]
 *   faxline config number set NUMBER [--profile NAME|""] [--fax-id ID|""] [--cost-center C|""] [--active true|false|""] [--paused true|false|""]
 *                             [--display-number TEXT|""] [--comments TEXT|""]
 *   faxline config number remove NUMBER                      (operators: takes it away from the customer)
 *   faxline config profiles [--inherit] [--json]
 *   faxline config profile show NAME [--inherit] [--json]
 *   faxline config profile set NAME [--fax-id ID|""] [--cost-center C|""] [--active true|false|""] [--paused true|false|""] [--max-waiting-faxes N|""] [--comments TEXT|""]
 *                             [--mail-to ADDR,ADDR|""] [--attach PDF|TIFF|NONE] [--push-url URL|""] [--retention-days N|""]
 *   faxline config profile remove NAME
 *   faxline config settings [--fax-id ID|""] [--cost-center C|""] [--active true|false|""] [--paused true|false|""]
 *   faxline config audit [--limit N] [--offset N] [--resource R] [--key K] [--json]
 *
 * `set` changes only what is named ("" unsets it); `profile set` creates a profile that does not
 * exist. Exit codes: 0 done, 1 node not reachable, 2 refused or wrong usage.
 */
import { FaxlineApiError, FaxlineConfiguration, FaxlineConnectionError, type InboundNumber, type InboundProfile } from "../../packages/client/src/index.ts";
import type { FaxlineConfig } from "../config/schema.ts";

export class ConfigCommandError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.name = "ConfigCommandError";
    this.exitCode = exitCode;
  }
}

export interface ConfigCommandOptions {
  url: string | null;
  custNr: string;
  login: string;
  password: string;
  json: boolean;
  inherit: boolean;
  /** The command's options by their long names (strings as given). */
  options: Record<string, string | undefined>;
}

/** "" → null (unset); undefined → not named. */
function text(value: string | undefined): string | null | undefined {
  return value === undefined ? undefined : value.trim() === "" ? null : value;
}

function bool(value: string | undefined, name: string): boolean | null | undefined {
  if (value === undefined) return undefined;
  const v = value.trim().toLowerCase();
  if (v === "") return null;
  if (v === "true" || v === "yes" || v === "on") return true;
  if (v === "false" || v === "no" || v === "off") return false;
  throw new ConfigCommandError(`--${name} is true, false or "" (inherited), not "${value}"`);
}

function integer(value: string | undefined, name: string): number | null | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === "") return null;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new ConfigCommandError(`--${name} is a whole number, not "${value}"`);
  return n;
}

/** Only the entries that were named. */
function named<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const show = (v: unknown) => (v === null || v === undefined ? "-" : String(v));

function numberLine(n: InboundNumber): string {
  return [n.number.padEnd(16), show(n.profile).padEnd(16), `active=${show(n.active)}`.padEnd(13), `paused=${show(n.paused)}`.padEnd(13), `faxId=${show(n.faxId)}`, `costCenter=${show(n.costCenter)}`, n.displayNumber ? `display=${n.displayNumber}` : ""].join(" ").trimEnd();
}

function profileLines(p: InboundProfile): string[] {
  const lines = [`${p.name}: active=${show(p.active)} paused=${show(p.paused)} maxWaitingFaxes=${show(p.maxWaitingFaxes)} faxId=${show(p.faxId)} costCenter=${show(p.costCenter)} retentionDays=${show(p.retentionDays)}${p.comments ? ` (${p.comments})` : ""}`];
  lines.push(`  numbers: ${p.numbers.length > 0 ? p.numbers.join(", ") : "none"}`);
  if (p.email) lines.push(`  email: ${p.email.recipients.join(", ")} (${p.email.attachment ?? "PDF"})`);
  if (p.webservice) lines.push(`  webservice: ${p.webservice.url}`);
  if (p.ftp) lines.push(`  ftp: ${p.ftp.target ?? `${p.ftp.host}`} (${p.ftp.authMethod ?? "key"}, ${p.ftp.documentFormat ?? "PDF"} + ${p.ftp.metadataFormat ?? "JSON"})`);
  return lines;
}

/** Runs one `faxline config` command; prints to `print`; returns the exit code. */
export async function runConfigCommand(config: FaxlineConfig, words: readonly string[], req: ConfigCommandOptions, print: (line: string) => void = console.log): Promise<number> {
  const baseUrl = (req.url ?? process.env.FAXLINE_API_URL ?? `http://127.0.0.1:${config.http.port}`).replace(/\/+$/, "");
  const api = new FaxlineConfiguration({ baseUrl, customerNumber: req.custNr, login: req.login, password: req.password });
  const o = req.options;
  const out = (value: unknown, human: () => string[]) => {
    if (req.json) print(JSON.stringify(value, null, 2));
    else for (const line of human()) print(line);
  };
  const [what, action, target] = words;
  try {
    switch (what) {
      case "numbers": {
        const list = await api.listInboundNumbers(
          named({
            prefix: o.prefix,
            assigned: bool(o.assigned, "assigned") ?? undefined,
            active: bool(o.active, "active") ?? undefined,
            costCenter: o["cost-center"],
            inherit: req.inherit || undefined,
            limit: integer(o.limit, "limit") ?? undefined,
            offset: integer(o.offset, "offset") ?? undefined,
          }),
        );
        out(list, () => (list.length === 0 ? ["no numbers"] : list.map(numberLine)));
        return 0;
      }
      case "number": {
        if (!target) throw new ConfigCommandError(`faxline config number ${action ?? "show|set|remove"} needs the NUMBER`);
        if (action === "show") {
          const n = await api.getInboundNumber(target, { inherit: req.inherit });
          out(n, () => [numberLine(n)]);
          return 0;
        }
        if (action === "set") {
          const change = named({
            profile: text(o.profile),
            faxId: text(o["fax-id"]),
            costCenter: text(o["cost-center"]),
            active: bool(o.active, "active"),
            paused: bool(o.paused, "paused"),
            displayNumber: text(o["display-number"]),
            comments: text(o.comments),
          });
          if (Object.keys(change).length === 0) throw new ConfigCommandError("faxline config number set changes nothing without --profile, --fax-id, --cost-center, --active, --paused, --display-number or --comments");
          const n = await api.patchInboundNumber(target, change);
          out(n, () => [numberLine(n)]);
          return 0;
        }
        if (action === "remove") {
          await api.deleteInboundNumber(target);
          print(`${target} no longer belongs to customer ${req.custNr}`);
          return 0;
        }
        throw new ConfigCommandError(`Unknown command "faxline config number ${action ?? ""}" (show, set, remove)`);
      }
      case "profiles": {
        const list = await api.listInboundProfiles({ inherit: req.inherit, ...named({ limit: integer(o.limit, "limit") ?? undefined, offset: integer(o.offset, "offset") ?? undefined }) });
        out(list, () => (list.length === 0 ? ["no profiles"] : list.flatMap(profileLines)));
        return 0;
      }
      case "profile": {
        if (!target) throw new ConfigCommandError(`faxline config profile ${action ?? "show|set|remove"} needs the profile's NAME`);
        if (action === "show") {
          const p = await api.getInboundProfile(target, { inherit: req.inherit });
          out(p, () => profileLines(p));
          return 0;
        }
        if (action === "set") {
          const mailTo = text(o["mail-to"]);
          const pushUrl = text(o["push-url"]);
          if (o.attach !== undefined && mailTo === undefined) throw new ConfigCommandError("--attach goes with --mail-to (the addresses the fax is mailed to)");
          const change = named({
            faxId: text(o["fax-id"]),
            costCenter: text(o["cost-center"]),
            active: bool(o.active, "active"),
            paused: bool(o.paused, "paused"),
            maxWaitingFaxes: integer(o["max-waiting-faxes"], "max-waiting-faxes"),
            comments: text(o.comments),
            retentionDays: integer(o["retention-days"], "retention-days"),
            email: mailTo === undefined ? undefined : mailTo === null ? null : { recipients: mailTo.split(",").map((a) => a.trim()).filter((a) => a !== ""), ...named({ attachment: o.attach }) },
            webservice: pushUrl === undefined ? undefined : pushUrl === null ? null : { url: pushUrl },
          });
          let exists = true;
          try {
            await api.getInboundProfile(target);
          } catch (err) {
            if (!(err instanceof FaxlineApiError && err.code === "profile_not_found")) throw err;
            exists = false;
          }
          const p = exists ? await api.patchInboundProfile(target, change) : await api.putInboundProfile(target, change);
          out(p, () => [exists ? `changed profile ${target}` : `created profile ${target}`, ...profileLines(p)]);
          return 0;
        }
        if (action === "remove") {
          await api.deleteInboundProfile(target);
          print(`removed profile ${target}; its numbers stay the customer's, without a profile`);
          return 0;
        }
        throw new ConfigCommandError(`Unknown command "faxline config profile ${action ?? ""}" (show, set, remove)`);
      }
      case "settings": {
        const change = named({ faxId: text(o["fax-id"]), costCenter: text(o["cost-center"]), active: bool(o.active, "active"), paused: bool(o.paused, "paused") });
        const s = Object.keys(change).length === 0 ? await api.getInboundSettings() : await api.patchInboundSettings(change);
        out(s, () => [`customer ${s.customer}: faxId=${show(s.faxId)} costCenter=${show(s.costCenter)} active=${show(s.active)} paused=${show(s.paused)}`]);
        return 0;
      }
      case "audit": {
        const page = await api.audit(named({ limit: integer(o.limit, "limit") ?? undefined, offset: integer(o.offset, "offset") ?? undefined, resource: o.resource, key: o.key }));
        out(page, () => [
          ...page.entries.map((e) => `${e.at} ${e.login} (${e.role}) ${e.action} ${e.resource}${e.key ? ` ${e.key}` : ""}: ${JSON.stringify(e.before)} → ${JSON.stringify(e.after)}`),
          ...(page.hasMore ? [`… more with --offset ${page.offset + page.limit}`] : []),
        ]);
        return 0;
      }
      default:
        throw new ConfigCommandError(`Unknown command "faxline config ${what ?? ""}" (numbers, number, profiles, profile, settings, audit)`);
    }
  } catch (err) {
    if (err instanceof FaxlineApiError) throw new ConfigCommandError(`The node refused it (${err.status} ${err.code}): ${err.message}`);
    if (err instanceof FaxlineConnectionError) throw new ConfigCommandError(err.message, 1);
    throw err;
  }
}
