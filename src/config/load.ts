/**
 * Loads the configuration: defaults < config file (YAML or JSON) < environment < explicit
 * overrides (used by tests and the CLI). Validates every key against config/schema.ts, checks
 * the cross-key rules, and returns a deep-frozen object. A bad value stops the node at start
 * with a message that names the key, the source and what is expected.
 */
import { readFileSync } from "node:fs";
import { parseYaml } from "../lib/yaml.ts";
import { addIsoDuration, parseIsoDuration } from "../lib/durations.ts";
import { readTrunksFile } from "../line/trunks/trunk-config.ts";
import {
  CONFIG_KEYS,
  ConfigError,
  DATACENTER_REGION,
  coerceConfigValue,
  type ConfigKeySpec,
  type Datacenter,
  type FaxlineConfig,
} from "./schema.ts";

export interface LoadConfigOptions {
  /** Path of a YAML or JSON config file; absent: FAXLINE_CONFIG, else none. */
  file?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** Values by dotted path that win over everything else. */
  overrides?: Record<string, unknown>;
}

function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  let cur = obj;
  for (const part of parts.slice(0, -1)) {
    cur[part] ??= {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[parts.at(-1)!] = value;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`Cannot read config file ${file}: ${(err as Error).message}`);
  }
  try {
    const parsed: unknown = file.endsWith(".json") ? JSON.parse(text) : parseYaml(text);
    if (parsed === null || parsed === undefined) return {};
    if (typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("the top level must be a mapping");
    return parsed as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(`Config file ${file} is not valid ${file.endsWith(".json") ? "JSON" : "YAML"}: ${(err as Error).message}`);
  }
}

function unknownKeys(fileValues: Record<string, unknown>, prefix = ""): string[] {
  const known = new Set(CONFIG_KEYS.map((s) => s.path));
  const out: string[] = [];
  for (const [key, value] of Object.entries(fileValues)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (known.has(path)) continue;
    if (value && typeof value === "object" && !Array.isArray(value) && [...known].some((p) => p.startsWith(`${path}.`))) {
      out.push(...unknownKeys(value as Record<string, unknown>, path));
    } else {
      out.push(path);
    }
  }
  return out;
}

export function loadConfig(options: LoadConfigOptions = {}): FaxlineConfig {
  const env = options.env ?? process.env;
  const file = options.file ?? (env.FAXLINE_CONFIG || undefined);
  const fileValues = file ? readConfigFile(file) : {};
  const strays = unknownKeys(fileValues);
  if (strays.length > 0) {
    const trunkHint = strays.some((p) => p === "lines.trunks" || p.startsWith("lines.trunks."))
      ? " Trunks are listed in a file of their own, named by lines.trunksFile (docs/trunks.md)."
      : "";
    throw new ConfigError(`Config file ${file} has unknown keys: ${strays.join(", ")}. See docs/config.md for the known keys.${trunkHint}`);
  }

  const result: Record<string, unknown> = {};
  for (const spec of CONFIG_KEYS) {
    let value: unknown = coerceDefault(spec);
    const fromFile = getPath(fileValues, spec.path);
    if (fromFile !== undefined && fromFile !== null) value = coerceConfigValue(spec, fromFile, `config file ${file}`);
    const fromEnv = env[spec.env];
    if (fromEnv !== undefined && fromEnv !== "") value = coerceConfigValue(spec, fromEnv, `environment ${spec.env}`);
    const fromOverride = options.overrides?.[spec.path];
    if (fromOverride !== undefined) value = coerceConfigValue(spec, fromOverride, "override");
    setPath(result, spec.path, value);
  }
  const unknownOverrides = Object.keys(options.overrides ?? {}).filter((p) => !CONFIG_KEYS.some((s) => s.path === p));
  if (unknownOverrides.length > 0) throw new ConfigError(`Unknown configuration keys: ${unknownOverrides.join(", ")}`);

  // The trunks are a list of structured entries, kept in a file of their own (line/trunks/trunk-config.ts).
  const trunksFile = (result.lines as { trunksFile: string }).trunksFile;
  (result.lines as Record<string, unknown>).trunks = trunksFile === "" ? [] : readTrunksFile(trunksFile, { env });

  const config = result as unknown as FaxlineConfig;
  checkCrossKeyRules(config);
  return deepFreeze(config);
}

function coerceDefault(spec: ConfigKeySpec): unknown {
  return coerceConfigValue(spec, spec.default, "default");
}

function checkCrossKeyRules(config: FaxlineConfig): void {
  const dcRegion = DATACENTER_REGION[config.node.datacenter as Datacenter];
  if (dcRegion !== config.node.region) {
    throw new ConfigError(
      `Data center ${config.node.datacenter} lies in region ${dcRegion}, but node.region is ${config.node.region}. ` +
        `Set FAXLINE_REGION=${dcRegion} or pick a data center of ${config.node.region}.`,
    );
  }
  const scale = Number(config.testLine.timeScale);
  if (!Number.isFinite(scale) || scale < 0) {
    throw new ConfigError(`Invalid configuration testLine.timeScale: expected a number >= 0, got ${JSON.stringify(config.testLine.timeScale)}`);
  }
  for (const key of ["defaultValidity", "maxValidity"] as const) {
    const validity = parseIsoDuration(config.jobs[key]);
    const probe = validity ? addIsoDuration(Date.UTC(2000, 0, 31), validity) : NaN;
    if (!validity || !Number.isFinite(probe) || probe <= Date.UTC(2000, 0, 31) || probe > Date.UTC(2100, 0, 1)) {
      throw new ConfigError(`Invalid configuration jobs.${key}: expected an ISO-8601 duration longer than zero and shorter than 100 years, such as P1M or P30D, got ${JSON.stringify(config.jobs[key])}`);
    }
  }
  try {
    // UTC, the default, is always known; checking it would cost every command ICU's first load (~20 ms).
    if (config.render.defaultTimeZone !== "UTC") new Intl.DateTimeFormat("en", { timeZone: config.render.defaultTimeZone });
  } catch {
    throw new ConfigError(`Invalid configuration render.defaultTimeZone: expected an IANA time zone such as Europe/Berlin or UTC, got ${JSON.stringify(config.render.defaultTimeZone)}`);
  }
  const storeUrl = config.store.url.trim();
  if (storeUrl !== "" && !/^postgres(ql)?:\/\//i.test(storeUrl)) {
    throw new ConfigError(
      `Invalid configuration store.url: expected empty (the embedded SQLite store under store.dataDir) or a PostgreSQL URL such as postgres://faxline:PASSWORD@db1,db2/faxline?target_session_attrs=read-write, got ${JSON.stringify(storeUrl.replace(/:[^:@/]*@/, ":***@"))}`,
    );
  }
  if (config.node.roles.length === 0) throw new ConfigError("node.roles is empty: name at least one of api, scheduler, sender, notifier, retention, mail-to-fax.");
  if (config.node.roles.includes("mail-to-fax")) {
    if (config.mailToFax.domains.length === 0) {
      throw new ConfigError("Invalid configuration: the mail-to-fax role needs mailToFax.domains, the mail domains whose addresses are fax numbers (e.g. fax.example.com).");
    }
    const bad = config.mailToFax.domains.find((d) => !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/i.test(d));
    if (bad !== undefined) throw new ConfigError(`Invalid configuration mailToFax.domains: "${bad}" is not a domain name such as fax.example.com.`);
    if ((config.mailToFax.tlsCertFile === "") !== (config.mailToFax.tlsKeyFile === "")) {
      throw new ConfigError("Invalid configuration: mailToFax.tlsCertFile and mailToFax.tlsKeyFile go together (PEM files); give both for STARTTLS, or neither.");
    }
    if (config.mailToFax.requireTls && config.mailToFax.tlsCertFile === "") {
      throw new ConfigError("Invalid configuration: mailToFax.requireTls needs mailToFax.tlsCertFile and mailToFax.tlsKeyFile.");
    }
  }
  const { chartInterval, chartWindow } = config.console;
  if (chartInterval < 100 || chartWindow < chartInterval || chartWindow / chartInterval > 10_000) {
    throw new ConfigError(
      `Invalid configuration console.chartInterval (${chartInterval} ms) and console.chartWindow (${chartWindow} ms): the interval must be at least 100 ms and the window at least one interval and at most 10 000 of them, such as 5s and 1h`,
    );
  }
}
