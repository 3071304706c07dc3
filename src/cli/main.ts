/**
 * The `faxline` command.
 *
 *   faxline serve [--config FILE]
 *   faxline accounts create --customer CUSTNR --login LOGIN --password PASSWORD [--test] [--admin] [--manager]
 *                           [--allow-ip CIDR]... [--retention-days N]
 *   faxline accounts list [--customer CUSTNR] [--json]
 *   faxline accounts disable --login LOGIN | accounts enable --login LOGIN
 *   faxline inbound topic create|delete --customer CUSTNR --name TOPIC [--retention-days N] | topic list [--customer CUSTNR] [--json]
 *   faxline inbound topic set-delivery --customer CUSTNR --name TOPIC [--mail-to ADDR,ADDR|""] [--attach PDF|TIFF|NONE] [--push-url URL|""]
 *   faxline inbound topic sftp-host-key … | set-sftp … | remove-sftp …   (fax-to-SFTP: docs/notifications.md)
  faxline inbound topic sftp-host-key (--host HOST [--port PORT] | --customer CUSTNR --name TOPIC)
  faxline inbound topic set-sftp --customer CUSTNR --name TOPIC [--host HOST] [--port PORT] [--user USER] [--host-key SHA256:…]...
    [--private-key-file FILE [--key-passphrase TEXT] | --generate-key | --password-file FILE|-] [--directory DIR]
    [--file-pattern PATTERN] [--format PDF|TIFF] [--metadata JSON|XML]
  faxline inbound topic remove-sftp --customer CUSTNR --name TOPIC
 *   faxline inbound number add --customer CUSTNR --topic TOPIC --number NUMBER | number remove --customer CUSTNR --number NUMBER
 *   faxline inbound credential issue --customer CUSTNR [--topic TOPIC]... [--label TEXT] | credential list --customer CUSTNR | credential disable --id ID
 *   faxline accounts set-admin --login LOGIN [--off]
 *   faxline accounts set-manager --login LOGIN [--off]
 *   faxline accounts set-retention --customer CUSTNR --days N
 *   faxline accounts set-push --customer CUSTNR [--url URL] [--format XML|JSON|TEMPLATE]
 *                             [--events LIST|none] [--oauth2-token-url URL]
 *   faxline accounts set-report-mail --customer CUSTNR [--success ADDRESS] [--failure ADDRESS] [--attach NEVER|SUCCESS_ONLY|FAILURE_ONLY|ALWAYS] [--attach-format TIFF|PDF]
 *   faxline accounts show-push --customer CUSTNR [--json]
 *   faxline accounts rotate-signing-secret --customer CUSTNR
 *   faxline accounts retire-signing-secret --customer CUSTNR [--all]
 *   faxline accounts set-header --customer CUSTNR --header TEXT|""
 *   faxline accounts set-tone-mode --customer CUSTNR --tone-mode AUTO|TEXT|PHOTO|THRESHOLD|""
 *   faxline templates install --customer CUSTNR --kind KIND --file FILE [--content-type TYPE]
 *   faxline templates install --customer CUSTNR --kind cover|overlay --name NAME --file FILE
 *   faxline templates remove --customer CUSTNR --kind KIND [--name NAME]
 *   faxline blacklist add NUMBER [--note TEXT] | blacklist remove NUMBER | blacklist list [--json]
 *   faxline test-numbers [--json]
 *   faxline send FILE... --to NUMBER[,NUMBER...] --customer C --login L --password P [--url URL] [--detach] [--json]
 *                                                                      (src/cli/send-through-node.ts)
 *   faxline report out|in --from DATE --to DATE [--filter COLUMN=V,V]... [--sort ASC|DESC] [--format csv|json] [--out FILE]
 *   faxline report summary out|calls|in|failing --from DAY --to DAY [--group-by DAY,COUNTRY] [--filter NAME=V,V]... [--limit N]
 *   faxline report rebuild-rollups [--from DAY --to DAY]               (src/cli/report-commands.ts)
 *   faxline config numbers|number|profiles|profile|settings|audit …     (the configuration API; src/cli/config-commands.ts)
 *   faxline migrate [--check] | nodes [--json] | store copy --to URL | datacenter adopt --from DC --to DC
 *                                                                      (src/cli/store-commands.ts)
 *   faxline render FILE... --out OUT.tif [--paper A4|LETTER] [--resolution HIGH|LOW] [--charset CHARSET]
 *                  [--header TEXT] [--cover default|TEMPLATE.svg|TEMPLATE.html] [--overlay FILE [--overlay-mode MODE]]
 *                  [--tone-mode AUTO|TEXT|PHOTO|THRESHOLD] [--suppress-blank-pages] [--to NUMBER] [--property KEY=VALUE]... [--csid CSID]
 *   faxline fax send FILE... --to NUMBER|SIP-URI [--trunk NAME] [--transport t38|g711] [--ecm on|off]
 *                  [--csid CSID] [--json] and the page options of render (src/cli/fax-send.ts)
 *
 * Every command reads the same configuration (--config FILE or FAXLINE_CONFIG, then FAXLINE_*
 * variables); commands other than serve work on the store of FAXLINE_DATA_DIR directly and may
 * run while the node runs.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
// Only what every command needs is imported here; each command imports its own modules when it
// runs (await import), so that `faxline test-numbers` does not load the API, the store drivers,
// the renderer and the fax engine (issue 13: 0.9 s and 117 MiB before, for every command).
import { loadConfig } from "../config/load.ts";
import { ConfigError } from "../config/config-error.ts";
import type { FaxlineConfig } from "../config/schema.ts";
import type { NotificationSettings } from "../accounts/notification-settings.ts";
import type { Store } from "../store/store.ts";
import type { RenderFilesRequest } from "./render-files.ts";
import { TONE_MODES, type ToneMode } from "../render/fax-image/tone-mode.ts";
import type { OverlayMode } from "../render/overlay/overlay-pages.ts";
import type { FaxBitRateCap } from "../line/fax-engine/engine.ts";

const USAGE = `Usage:
  faxline --version | --help
  faxline serve [--config FILE]
  faxline accounts create --customer CUSTNR --login LOGIN --password PASSWORD [--test] [--admin] [--manager] [--allow-ip CIDR]... [--retention-days N]
  faxline accounts set-admin --login LOGIN [--off]
  faxline accounts set-manager --login LOGIN [--off]
  faxline accounts list [--customer CUSTNR] [--json]
  faxline accounts disable --login LOGIN
  faxline accounts enable --login LOGIN
  faxline accounts set-retention --customer CUSTNR --days N
  faxline accounts set-push --customer CUSTNR [--url URL|""] [--format XML|JSON|TEMPLATE] [--events recipient.completed,attempt.failed|none] [--oauth2-token-url URL|""]
  faxline accounts show-push --customer CUSTNR [--json]
  faxline accounts rotate-signing-secret --customer CUSTNR
  faxline accounts retire-signing-secret --customer CUSTNR [--all]
  faxline accounts set-header --customer CUSTNR --header TEXT|""
  faxline accounts set-tone-mode --customer CUSTNR --tone-mode AUTO|TEXT|PHOTO|THRESHOLD|""
  faxline templates install --customer CUSTNR --kind push|mail-subject|mail-text|mail-html --file FILE [--content-type TYPE]
  faxline templates install --customer CUSTNR --kind cover|overlay --name NAME --file FILE
  faxline templates remove --customer CUSTNR --kind KIND [--name NAME]
  faxline inbound topic create --customer CUSTNR --name TOPIC [--retention-days N]
  faxline inbound topic delete --customer CUSTNR --name TOPIC
  faxline inbound topic list [--customer CUSTNR] [--json]
  faxline inbound topic set-delivery --customer CUSTNR --name TOPIC [--mail-to ADDR,ADDR|""] [--attach PDF|TIFF|NONE] [--push-url URL|""]
  faxline inbound number add --customer CUSTNR --topic TOPIC --number NUMBER
  faxline inbound number remove --customer CUSTNR --number NUMBER
  faxline inbound credential issue --customer CUSTNR [--topic TOPIC]... [--label TEXT]
  faxline inbound credential list --customer CUSTNR [--json]
  faxline inbound credential disable --id ID
  faxline blacklist add NUMBER [--note TEXT]
  faxline blacklist remove NUMBER
  faxline blacklist list [--json]
  faxline test-numbers [--json]
  faxline send FILE... --to NUMBER[,NUMBER...] --customer CUSTNR --login LOGIN --password PASSWORD [--url URL]
               [--charset CHARSET] [--detach] [--json]      (through a running node; follows the job until it is final)
  faxline report out|in --from DATE --to DATE [--filter COLUMN=VALUE,VALUE]... [--sort ASC|DESC] [--format csv|json] [--out FILE]
               [--customer CUSTNR --login LOGIN --password PASSWORD] [--url URL]   (usage records, through a running node)
  faxline report summary out|calls|in|failing --from DAY --to DAY [--group-by DAY,COUNTRY,…] [--filter NAME=VALUE,…]... [--limit N]
               [--format csv|json] [--out FILE]
  faxline report rebuild-rollups [--from DAY --to DAY]
  faxline config numbers [--prefix P] [--assigned true|false] [--active true|false] [--cost-center C] [--inherit] [--limit N] [--offset N] [--json]
  faxline config number show|remove NUMBER [--inherit] [--json]
  faxline config number set NUMBER [--profile NAME|""] [--fax-id ID|""] [--cost-center C|""] [--active true|false|""] [--paused true|false|""] [--display-number TEXT|""] [--comments TEXT|""]
  faxline config profiles [--inherit] [--json]
  faxline config profile show|remove NAME [--inherit] [--json]
  faxline config profile set NAME [--fax-id ID|""] [--cost-center C|""] [--active true|false|""] [--paused true|false|""] [--max-waiting-faxes N|""] [--comments TEXT|""]
               [--mail-to ADDR,ADDR|""] [--attach PDF|TIFF|NONE] [--push-url URL|""] [--retention-days N|""]
  faxline config settings [--fax-id ID|""] [--cost-center C|""] [--active true|false|""] [--paused true|false|""]
  faxline config audit [--limit N] [--offset N] [--resource R] [--key K] [--json]
               (the configuration API through a running node: [--customer CUSTNR --login LOGIN --password PASSWORD] [--url URL])
  faxline migrate [--check]
  faxline nodes [--json]
  faxline store copy --to postgres://USER:PASSWORD@HOST/DATABASE
  faxline datacenter adopt --from DE1 --to DE2
  faxline render FILE... --out OUT.tif [--paper A4|LETTER] [--resolution HIGH|LOW] [--charset CHARSET]
                 [--header TEXT] [--cover default|TEMPLATE.svg|TEMPLATE.html] [--overlay FILE [--overlay-mode MODE]]
                 [--tone-mode AUTO|TEXT|PHOTO|THRESHOLD] [--suppress-blank-pages] [--to NUMBER] [--property KEY=VALUE]... [--csid CSID]
  faxline fax send FILE... --to NUMBER|SIP-URI [--trunk NAME] [--transport t38|g711] [--ecm on|off] [--max-rate 14400|9600|4800] [--csid CSID] [--json]
                 [--paper A4|LETTER] [--resolution HIGH|LOW] [--charset CHARSET] [--header TEXT] [--cover default|TEMPLATE]
                 [--overlay FILE [--overlay-mode MODE]] [--tone-mode MODE] [--suppress-blank-pages] [--property KEY=VALUE]...

Configuration: --config FILE (YAML or JSON) or FAXLINE_CONFIG, and FAXLINE_* variables (docs/config.md).`;

/**
 * The usage lines of one command (`faxline accounts --help`, `faxline inbound topic -h`): those
 * that start with its words, with their continuation lines; all of USAGE when none does.
 */
export function usageFor(words: readonly string[]): string {
  const [heading, ...lines] = USAGE.split("\n");
  const entries: string[][] = [];
  for (const line of lines) {
    if (line.startsWith("  faxline ")) entries.push([line]);
    else if (line.startsWith("    ") && entries.length > 0) entries.at(-1)!.push(line);
    else break; // the blank line before the configuration note
  }
  const prefix = `  faxline ${words.join(" ")}`;
  const matching = entries.filter((entry) => entry[0] === prefix || entry[0]!.startsWith(`${prefix} `));
  if (words.length === 0 || matching.length === 0) return USAGE;
  return [heading, ...matching.flat(), "", USAGE.split("\n").at(-1)].join("\n");
}

class UsageError extends Error {}

function requireOption(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== "string" || v === "") throw new UsageError(`--${name} is required`);
  return v;
}

async function withStore<T>(config: FaxlineConfig, fn: (store: Store) => Promise<T>): Promise<T> {
  const { openStore } = await import("../store/dialects/open-store.ts");
  const store = await openStore(config);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function printPushSettings(s: NotificationSettings, json: boolean): void {
  if (json) {
    console.log(JSON.stringify(s, null, 2));
    return;
  }
  console.log(`Customer ${s.custNr}`);
  console.log(`  default push URL:  ${s.pushUrl ?? "(none: only jobs that name a URL are pushed)"}`);
  console.log(`  push format:       ${s.pushFormat}`);
  console.log(`  extra push events: ${s.pushEvents.length > 0 ? s.pushEvents.join(", ") : "(none)"}`);
  console.log(`  OAuth2 token URL:  ${s.oauth2TokenUrl ?? "(none)"}`);
  console.log(`  signing secrets:   ${s.signingSecrets === 0 ? "none (pushes are not signed)" : s.signingSecrets}`);
  const mail = s.reportMail;
  console.log(
    `  e-mail report:     ${mail === null ? "(none: only jobs that ask for one get one)" : `success ${mail.successAddress ?? "-"}, failure ${mail.failureAddress ?? "-"}, attach ${mail.attachedFaxImageMode} as ${mail.attachedFaxImageFormat}`}`,
  );
  for (const t of s.templates) console.log(`  template ${t.kind}/${t.name}: ${t.contentType}, ${t.bytes} bytes`);
}

async function serve(config: FaxlineConfig): Promise<void> {
  const [{ createLogger, flushLogs }, { startNode }] = await Promise.all([import("../lib/logger.ts"), import("../roles/start-node.ts")]);
  const logger = createLogger({ level: config.log.level });
  const node = await startNode(config, logger);
  let signals = 0;
  const exit = (code: number): void => {
    void flushLogs(logger).then(() => process.exit(code));
  };
  const shutdown = (signal: string) => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, "stopping at once: calls still in progress are cut off");
      exit(1);
      return;
    }
    logger.info({ signal, graceSeconds: config.node.shutdownGrace / 1000 }, "shutting down: draining");
    node.stop().then(
      () => exit(0),
      (err) => {
        logger.error({ err }, "shutdown failed");
        exit(1);
      },
    );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGHUP", () => void node.reload());
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: "string" },
      customer: { type: "string" },
      login: { type: "string" },
      password: { type: "string" },
      test: { type: "boolean", default: false },
      admin: { type: "boolean", default: false },
      manager: { type: "boolean", default: false },
      off: { type: "boolean", default: false },
      "allow-ip": { type: "string", multiple: true },
      "retention-days": { type: "string" },
      days: { type: "string" },
      note: { type: "string" },
      url: { type: "string" },
      format: { type: "string" },
      events: { type: "string" },
      "oauth2-token-url": { type: "string" },
      success: { type: "string" },
      failure: { type: "string" },
      attach: { type: "string" },
      "attach-format": { type: "string" },
      all: { type: "boolean", default: false },
      kind: { type: "string" },
      file: { type: "string" },
      "content-type": { type: "string" },
      json: { type: "boolean", default: false },
      out: { type: "string" },
      paper: { type: "string" },
      resolution: { type: "string" },
      charset: { type: "string" },
      header: { type: "string" },
      cover: { type: "string" },
      overlay: { type: "string" },
      "overlay-mode": { type: "string" },
      "tone-mode": { type: "string" },
      "suppress-blank-pages": { type: "boolean", default: false },
      to: { type: "string" },
      property: { type: "string", multiple: true },
      csid: { type: "string" },
      name: { type: "string" },
      topic: { type: "string", multiple: true },
      number: { type: "string" },
      label: { type: "string" },
      id: { type: "string" },
      "mail-to": { type: "string" },
      "push-url": { type: "string" },
      host: { type: "string" },
      port: { type: "string" },
      user: { type: "string" },
      "private-key-file": { type: "string" },
      "key-passphrase": { type: "string" },
      "generate-key": { type: "boolean", default: false },
      "password-file": { type: "string" },
      "host-key": { type: "string", multiple: true },
      directory: { type: "string" },
      "file-pattern": { type: "string" },
      metadata: { type: "string" },
      trunk: { type: "string" },
      transport: { type: "string" },
      ecm: { type: "string" },
      "max-rate": { type: "string" },
      check: { type: "boolean", default: false },
      from: { type: "string" },
      filter: { type: "string", multiple: true },
      "group-by": { type: "string" },
      sort: { type: "string" },
      limit: { type: "string" },
      offset: { type: "string" },
      prefix: { type: "string" },
      assigned: { type: "string" },
      active: { type: "string" },
      paused: { type: "string" },
      "max-waiting-faxes": { type: "string" },
      "cost-center": { type: "string" },
      inherit: { type: "boolean", default: false },
      "fax-id": { type: "string" },
      "display-number": { type: "string" },
      comments: { type: "string" },
      profile: { type: "string" },
      resource: { type: "string" },
      key: { type: "string" },
      detach: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
      version: { type: "boolean", short: "v", default: false },
    },
  });
  const [command, sub, arg] = positionals;
  if (values.version) {
    const { faxlineVersion } = await import("../lib/version.ts");
    console.log(`faxline ${faxlineVersion()}`);
    return 0;
  }
  if (values.help || !command) {
    // `faxline send --help`: the lines of that command; the words after it (a file, a number) are not.
    const words = positionals.slice(0, 2).filter((word) => /^[a-z][a-z-]*$/.test(word));
    const text = !values.help ? USAGE : usageFor(words) !== USAGE ? usageFor(words) : usageFor(words.slice(0, 1));
    console.log(text);
    return command || values.help ? 0 : 2;
  }
  if (command === "test-numbers") {
    const { testNumbersForDisplay } = await import("../line/test-numbers.ts");
    const numbers = testNumbersForDisplay();
    if (values.json) console.log(JSON.stringify(numbers, null, 2));
    else for (const n of numbers) console.log(`${n.number.padEnd(14)} ${n.status.padEnd(13)} ${n.description}`);
    return 0;
  }
  const config = loadConfig({ file: values.config });
  const now = Date.now();
  switch (command) {
    case "serve":
      await serve(config);
      return -1;
    case "migrate":
      return (await import("./store-commands.ts")).migrateCommand(config, { check: values.check === true });
    case "nodes":
      return (await import("./store-commands.ts")).nodesCommand(config, { json: values.json === true });
    case "store":
      if (sub !== "copy") throw new UsageError(`Unknown store command "${sub ?? ""}" (faxline store copy --to URL)`);
      return (await import("./store-commands.ts")).storeCopyCommand(config, { to: requireOption(values, "to") });
    case "datacenter":
      if (sub !== "adopt") throw new UsageError(`Unknown datacenter command "${sub ?? ""}" (faxline datacenter adopt --from DE1 --to DE2)`);
      return (await import("./store-commands.ts")).datacenterAdoptCommand(config, { from: requireOption(values, "from"), to: requireOption(values, "to") });
    case "accounts": {
      const { createLogin, listLogins, setCustomerRetention, setLoginAdmin, setLoginDisabled, setLoginManager } = await import("../accounts/accounts.ts");
      const { getNotificationSettings, retireSigningSecrets, rotateSigningSecret, setPushSettings, setReportMail } = await import("../accounts/notification-settings.ts");
      const { setDefaultHeader, setDefaultToneMode } = await import("../accounts/rendering-settings.ts");
      return withStore(config, async ({ db }) => {
        switch (sub) {
          case "create": {
            const days = values["retention-days"];
            const result = await createLogin(
              db,
              {
                custNr: requireOption(values, "customer"),
                login: requireOption(values, "login"),
                password: requireOption(values, "password"),
                isTest: values.test === true,
                isAdmin: values.admin === true,
                isManager: values.manager === true,
                ipAllowList: values["allow-ip"] ?? null,
                retentionDays: days === undefined ? null : Number(days),
              },
              now,
            );
            console.log(
              `Created ${values.test ? "test " : ""}${values.admin ? "operator " : ""}${values.manager ? "manager " : ""}login ${values.login} for customer ${values.customer}${result.customerCreated ? " (new customer)" : ""}`,
            );
            return 0;
          }
          case "list": {
            const logins = await listLogins(db, values.customer);
            if (values.json) console.log(JSON.stringify(logins, null, 2));
            else {
              for (const l of logins) {
                console.log(
                  `${l.custNr.padEnd(12)} ${l.login.padEnd(24)} ${l.test ? "test" : "live"}${l.admin ? " operator" : ""}${l.manager ? " manager" : ""} ${l.disabled ? "disabled" : "enabled "} ${l.ipAllowList?.join(",") ?? "any address"}`,
                );
              }
              if (logins.length === 0) console.log("No logins.");
            }
            return 0;
          }
          case "disable":
          case "enable":
            await setLoginDisabled(db, requireOption(values, "login"), sub === "disable", now);
            console.log(`Login ${values.login} ${sub}d`);
            return 0;
          case "set-admin": {
            const login = requireOption(values, "login");
            await setLoginAdmin(db, login, values.off !== true);
            console.log(values.off ? `Login ${login} is no longer an operator` : `Login ${login} is an operator: the console shows it the Operations pages`);
            return 0;
          }
          case "set-manager": {
            const login = requireOption(values, "login");
            await setLoginManager(db, login, values.off !== true);
            console.log(values.off ? `Login ${login} may no longer change its customer's settings` : `Login ${login} may change its customer's settings in the console`);
            return 0;
          }
          case "set-retention": {
            const days = Number(requireOption(values, "days"));
            if (!Number.isInteger(days) || days < 1) throw new UsageError("--days must be a whole number of days, at least 1");
            await setCustomerRetention(db, requireOption(values, "customer"), days);
            console.log(`Customer ${values.customer}: reports are kept ${days} days`);
            return 0;
          }
          case "set-push": {
            const custNr = requireOption(values, "customer");
            const events = values.events === undefined ? undefined : values.events.trim() === "none" ? [] : values.events.split(",").map((e) => e.trim()).filter((e) => e !== "");
            await setPushSettings(db, custNr, {
              url: values.url === undefined ? undefined : values.url.trim() === "" ? null : values.url,
              format: values.format,
              events,
              oauth2TokenUrl: values["oauth2-token-url"] === undefined ? undefined : values["oauth2-token-url"].trim() === "" ? null : values["oauth2-token-url"],
            });
            printPushSettings(await getNotificationSettings(db, custNr), false);
            return 0;
          }
          case "set-report-mail": {
            const custNr = requireOption(values, "customer");
            const none = values.success === undefined && values.failure === undefined;
            await setReportMail(
              db,
              custNr,
              none
                ? null
                : { successAddress: values.success ?? null, failureAddress: values.failure ?? null, attachedFaxImageMode: values.attach ?? "NEVER", attachedFaxImageFormat: values["attach-format"] ?? "PDF" },
            );
            printPushSettings(await getNotificationSettings(db, custNr), false);
            return 0;
          }
          case "show-push":
            printPushSettings(await getNotificationSettings(db, requireOption(values, "customer")), values.json === true);
            return 0;
          case "rotate-signing-secret": {
            const { secret, previousKept } = await rotateSigningSecret(db, requireOption(values, "customer"));
            console.log(secret);
            console.error(
              previousKept
                ? "New signing secret above (shown once). Pushes now carry two signatures, with the new and the previous secret, until you run retire-signing-secret."
                : "New signing secret above (shown once). Pushes of this customer are signed from now on.",
            );
            return 0;
          }
          case "set-header": {
            const custNr = requireOption(values, "customer");
            const header = values.header;
            if (header === undefined) throw new UsageError('accounts set-header needs --header TEXT (or --header "" to remove it)');
            await setDefaultHeader(db, custNr, header === "" ? null : header);
            console.log(header === "" ? `Customer ${custNr} has no default header` : `Default header of customer ${custNr}: ${header}`);
            return 0;
          }
          case "set-tone-mode": {
            const custNr = requireOption(values, "customer");
            const mode = values["tone-mode"];
            if (mode === undefined) throw new UsageError('accounts set-tone-mode needs --tone-mode AUTO|TEXT|PHOTO|THRESHOLD (or --tone-mode "" to remove it)');
            const set = await setDefaultToneMode(db, custNr, mode.trim() === "" ? null : mode);
            console.log(set === null ? `Customer ${custNr} has no default tone mode (jobs that give none: AUTO)` : `Default tone mode of customer ${custNr}: ${set}`);
            return 0;
          }
          case "retire-signing-secret": {
            const removed = await retireSigningSecrets(db, requireOption(values, "customer"), values.all === true);
            console.log(values.all ? `Removed ${removed} signing secret(s); pushes are no longer signed` : removed > 0 ? "Removed the previous signing secret" : "There was no previous signing secret");
            return 0;
          }
          default:
            throw new UsageError(`Unknown accounts command "${sub ?? ""}"`);
        }
      });
    }
    case "inbound": {
      const { inboundCommand } = await import("./inbound-commands.ts");
      return withStore(config, ({ db }) => inboundCommand(db, config, { what: sub, action: arg, values }, now));
    }
    case "templates": {
      const { installTemplate, removeTemplate } = await import("../accounts/notification-settings.ts");
      const { installCoverTemplate, installOverlay } = await import("../accounts/rendering-settings.ts");
      return withStore(config, async ({ db }) => {
        const custNr = requireOption(values, "customer");
        const kind = requireOption(values, "kind");
        const name = values.name ?? "default";
        if (sub === "install") {
          const file = requireOption(values, "file");
          if (kind === "cover") {
            const installed = await installCoverTemplate(db, { custNr, name, fileName: file, content: readFileSync(file, "utf8") }, now);
            const keys = installed.keys.length === 0 ? "no placeholders" : `placeholders ${installed.keys.join(", ")}`;
            console.log(`Installed the ${installed.kind.toUpperCase()} cover template "${name}" of customer ${custNr} from ${file} (${keys})`);
          } else if (kind === "overlay") {
            await installOverlay(db, { custNr, name, fileName: file, bytes: readFileSync(file) }, now);
            console.log(`Installed the overlay "${name}" of customer ${custNr} from ${file}`);
          } else {
            await installTemplate(db, { custNr, kind, content: readFileSync(file, "utf8"), contentType: values["content-type"] }, now);
            console.log(`Installed the ${kind} template of customer ${custNr} from ${file}`);
          }
          return 0;
        }
        if (sub === "remove") {
          const what = kind === "cover" || kind === "overlay" ? `${kind} "${name}"` : `${kind} template`;
          console.log((await removeTemplate(db, custNr, kind, name)) ? `Removed the ${what} of customer ${custNr}` : `Customer ${custNr} has no ${what}`);
          return 0;
        }
        throw new UsageError(`Unknown templates command "${sub ?? ""}"`);
      });
    }
    case "send": {
      const files = positionals.slice(1);
      if (files.length === 0) throw new UsageError("faxline send needs at least one FILE");
      const to = requireOption(values, "to").split(",").map((n) => n.trim()).filter((n) => n !== "");
      const fromEnv = (name: string, env: string) => {
        const v = (values as Record<string, unknown>)[name] ?? process.env[env];
        if (typeof v !== "string" || v === "") throw new UsageError(`faxline send needs --${name} (or ${env})`);
        return v;
      };
      const { sendThroughNode } = await import("./send-through-node.ts");
      return sendThroughNode(config, {
        files,
        to,
        url: values.url ?? null,
        custNr: fromEnv("customer", "FAXLINE_API_CUSTOMER"),
        login: fromEnv("login", "FAXLINE_API_LOGIN"),
        password: fromEnv("password", "FAXLINE_API_PASSWORD"),
        charset: values.charset ?? null,
        detach: values.detach === true,
        json: values.json === true,
      });
    }
    case "report": {
      const { rebuildRollups, ReportCommandError, runReport } = await import("./report-commands.ts");
      try {
        if (sub === "rebuild-rollups") {
          const { openStore } = await import("../store/dialects/open-store.ts");
          const store = await openStore(config);
          try {
            await store.migrate();
            return await rebuildRollups(store, { from: values.from, to: values.to as string | undefined }, (line) => console.log(line));
          } finally {
            await store.close();
          }
        }
        const fromEnv = (name: string, env: string) => {
          const v = (values as Record<string, unknown>)[name] ?? process.env[env];
          if (typeof v !== "string" || v === "") throw new UsageError(`faxline report needs --${name} (or ${env})`);
          return v;
        };
        return await runReport(config, {
          what: sub ?? "",
          summary: sub === "summary" ? arg : undefined,
          from: values.from,
          to: values.to,
          format: values.format,
          out: values.out,
          filters: values.filter ?? [],
          groupBy: values["group-by"],
          sort: values.sort,
          limit: values.limit,
          url: values.url ?? null,
          custNr: fromEnv("customer", "FAXLINE_API_CUSTOMER"),
          login: fromEnv("login", "FAXLINE_API_LOGIN"),
          password: fromEnv("password", "FAXLINE_API_PASSWORD"),
        });
      } catch (err) {
        if (err instanceof ReportCommandError) {
          console.error(err.message);
          return err.exitCode;
        }
        throw err;
      }
    }
    case "config": {
      const { ConfigCommandError, runConfigCommand } = await import("./config-commands.ts");
      try {
        const fromEnv = (name: string, env: string) => {
          const v = (values as Record<string, unknown>)[name] ?? process.env[env];
          if (typeof v !== "string" || v === "") throw new UsageError(`faxline config needs --${name} (or ${env})`);
          return v;
        };
        const v = values as Record<string, unknown>;
        const options: Record<string, string | undefined> = {};
        for (const name of ["prefix", "assigned", "active", "paused", "max-waiting-faxes", "cost-center", "limit", "offset", "profile", "fax-id", "display-number", "comments", "mail-to", "attach", "push-url", "retention-days", "resource", "key"]) {
          if (typeof v[name] === "string") options[name] = v[name] as string;
        }
        return await runConfigCommand(config, positionals.slice(1), {
          url: values.url ?? null,
          custNr: fromEnv("customer", "FAXLINE_API_CUSTOMER"),
          login: fromEnv("login", "FAXLINE_API_LOGIN"),
          password: fromEnv("password", "FAXLINE_API_PASSWORD"),
          json: values.json,
          inherit: values.inherit,
          options,
        });
      } catch (err) {
        if (err instanceof ConfigCommandError) {
          console.error(err.message);
          return err.exitCode;
        }
        throw err;
      }
    }
    case "fax": {
      if (sub !== "send") throw new UsageError(`Unknown fax command "${sub ?? ""}" (faxline fax send FILE... --to NUMBER)`);
      const files = positionals.slice(2);
      if (files.length === 0 && values.cover === undefined) throw new UsageError("faxline fax send needs at least one FILE (or --cover)");
      const to = requireOption(values, "to");
      const transport = values.transport?.toLowerCase();
      if (transport !== undefined && transport !== "t38" && transport !== "g711") throw new UsageError(`--transport must be t38 or g711, not "${values.transport}"`);
      const ecm = values.ecm?.toLowerCase();
      if (ecm !== undefined && ecm !== "on" && ecm !== "off") throw new UsageError(`--ecm must be on or off, not "${values.ecm}"`);
      const [{ FAX_BIT_RATE_CAPS }, { OVERLAY_MODES }, { faxSend }] = await Promise.all([
        import("../line/fax-engine/engine.ts"),
        import("../render/overlay/overlay-pages.ts"),
        import("./fax-send.ts"),
      ]);
      const maxRate = values["max-rate"] === undefined ? null : Number(values["max-rate"]);
      if (maxRate !== null && !(FAX_BIT_RATE_CAPS as readonly number[]).includes(maxRate)) {
        throw new UsageError(`--max-rate must be one of ${FAX_BIT_RATE_CAPS.join(", ")} (bit/s), not "${values["max-rate"]}"`);
      }
      const page = pageOptions(values, OVERLAY_MODES);
      return faxSend(config, {
        files,
        to,
        trunk: values.trunk ?? null,
        transport: transport ?? null,
        ecm: ecm === undefined ? null : ecm === "on",
        maxBitRate: maxRate as FaxBitRateCap | null,
        render: page.render,
        csid: values.csid ?? null,
        properties: page.properties,
        json: values.json === true,
      });
    }
    case "render": {
      const [{ OVERLAY_MODES }, { renderFiles }] = await Promise.all([import("../render/overlay/overlay-pages.ts"), import("./render-files.ts")]);
      const files = positionals.slice(1);
      if (files.length === 0 && values.cover === undefined) throw new UsageError("faxline render needs at least one FILE (or --cover)");
      const { render, properties } = pageOptions(values, OVERLAY_MODES);
      return renderFiles(config, {
        ...render,
        files,
        out: requireOption(values, "out"),
        recipient: { number: values.to ?? "+4989123456789", properties },
        csid: values.csid ?? config.sender.csid,
      });
    }
    case "blacklist": {
      const { normalizeFaxNumber, REGION_NUMBER_CONTEXT } = await import("../numbers/normalize-number.ts");
      return withStore(config, async ({ db }) => {
        if (sub === "list") {
          const rows = await db.selectFrom("blacklist").selectAll().orderBy("e164").execute();
          if (values.json) console.log(JSON.stringify(rows.map((r) => ({ number: r.e164, note: r.note, addedAt: new Date(Number(r.added_at)).toISOString() })), null, 2));
          else for (const r of rows) console.log(`${r.e164.padEnd(16)} ${r.note ?? ""}`);
          return 0;
        }
        if (sub !== "add" && sub !== "remove") throw new UsageError(`Unknown blacklist command "${sub ?? ""}"`);
        if (!arg) throw new UsageError(`faxline blacklist ${sub} needs a NUMBER`);
        const normalized = normalizeFaxNumber(arg, REGION_NUMBER_CONTEXT[config.node.region]);
        if (!normalized.ok) throw new UsageError(normalized.message);
        if (sub === "add") {
          await db
            .insertInto("blacklist")
            .values({ e164: normalized.e164, note: values.note ?? null, added_at: now })
            .onConflict((oc) => oc.column("e164").doUpdateSet({ note: values.note ?? null }))
            .execute();
          console.log(`${normalized.e164} is on the do-not-fax list`);
        } else {
          const r = await db.deleteFrom("blacklist").where("e164", "=", normalized.e164).executeTakeFirst();
          console.log(Number(r.numDeletedRows) > 0 ? `${normalized.e164} removed` : `${normalized.e164} was not on the list`);
        }
        return 0;
      });
    }
    default:
      throw new UsageError(`Unknown command "${command}"`);
  }
}

/** The page options of `render` and `fax send`. */
function pageOptions(
  values: {
  paper?: string;
  resolution?: string;
  charset?: string;
  header?: string;
  cover?: string;
  overlay?: string;
  "overlay-mode"?: string;
  "tone-mode"?: string;
  "suppress-blank-pages"?: boolean;
  property?: string[];
  },
  OVERLAY_MODES: readonly string[],
): { render: Omit<RenderFilesRequest, "files" | "out" | "recipient" | "csid">; properties: Record<string, string> } {
  const paper = (values.paper ?? "A4").toUpperCase();
  if (paper !== "A4" && paper !== "LETTER") throw new UsageError(`--paper must be A4 or LETTER, not "${values.paper}"`);
  const resolution = (values.resolution ?? "HIGH").toUpperCase();
  if (resolution !== "HIGH" && resolution !== "LOW") throw new UsageError(`--resolution must be HIGH or LOW, not "${values.resolution}"`);
  const overlayMode = (values["overlay-mode"] ?? "ALL_PAGES").toUpperCase();
  if (!OVERLAY_MODES.includes(overlayMode)) throw new UsageError(`--overlay-mode must be one of ${OVERLAY_MODES.join(", ")}`);
  const toneMode = (values["tone-mode"] ?? "AUTO").toUpperCase();
  if (!(TONE_MODES as readonly string[]).includes(toneMode)) throw new UsageError(`--tone-mode must be one of ${TONE_MODES.join(", ")}`);
  const properties: Record<string, string> = {};
  for (const pair of values.property ?? []) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--property takes KEY=VALUE, got "${pair}"`);
    properties[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return {
    render: {
      paperFormat: paper,
      resolution,
      charset: values.charset ?? null,
      header: values.header ?? null,
      cover: values.cover ?? null,
      overlay: values.overlay === undefined ? null : { file: values.overlay, mode: overlayMode as OverlayMode },
      toneMode: toneMode as ToneMode,
      suppressBlankPages: values["suppress-blank-pages"] === true,
    },
    properties,
  };
}

/**
 * Whether `err` is one of the errors whose message is meant for the person at the terminal (printed
 * without a stack trace, exit code 1). Their modules are imported only here, on the error path.
 */
async function isUserFacingError(err: unknown): Promise<boolean> {
  const [{ AccountError }, { DataDirLockedError }, { NodeIdInUseError }, { StoreMigrationError }, { SendRequestError }] = await Promise.all([
    import("../accounts/accounts.ts"),
    import("../roles/data-dir-lock.ts"),
    import("../cluster/node-registry.ts"),
    import("../store/run-migrations.ts"),
    import("./send-through-node.ts"),
  ]);
  return err instanceof AccountError || err instanceof DataDirLockedError || err instanceof NodeIdInUseError || err instanceof StoreMigrationError || err instanceof SendRequestError;
}

export async function runCli(argv: string[]): Promise<void> {
  try {
    const code = await main(argv);
    if (code >= 0) process.exitCode = code;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`faxline: ${err.message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else if (err instanceof ConfigError || (await isUserFacingError(err))) {
      console.error(`faxline: ${(err as Error).message}`);
      process.exitCode = 1;
    } else if (err instanceof TypeError && (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      console.error(`faxline: ${err.message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else {
      throw err;
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("/cli/main.ts") || process.argv[1]?.endsWith("/cli/main.js")) {
  await runCli(process.argv.slice(2));
}
