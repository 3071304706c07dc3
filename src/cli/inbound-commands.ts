/**
 * `faxline inbound …`: topics, their fax numbers and the pull API's passwords.
 *
 *   faxline inbound topic create --customer C --name T [--retention-days N]
 *   faxline inbound topic delete --customer C --name T
 *   faxline inbound topic list [--customer C] [--json]
 *   faxline inbound topic set-delivery --customer C --name T [--mail-to A,B|""] [--attach PDF|TIFF|NONE] [--push-url URL|""]
 *   faxline inbound topic sftp-host-key (--host H [--port P] | --customer C --name T)
 *   faxline inbound topic set-sftp --customer C --name T [--host H] [--port P] [--user U] [--host-key SHA256:…]...
 *       [--private-key-file F [--key-passphrase X] | --generate-key | --password-file F|-] [--directory D]
 *       [--file-pattern P] [--format PDF|TIFF] [--metadata JSON|XML]
 *   faxline inbound topic remove-sftp --customer C --name T
 *   faxline inbound number add --customer C --topic T --number N
 *   faxline inbound number remove --customer C --number N
 *   faxline inbound credential issue --customer C [--topic T]... [--label L]
 *   faxline inbound credential list --customer C [--json]
 *   faxline inbound credential disable --id ID
 */
import { readFileSync } from "node:fs";
import { hostname, userInfo } from "node:os";
import type { Kysely } from "kysely";
import { AccountError } from "../accounts/accounts.ts";
import type { FaxlineConfig } from "../config/schema.ts";
import { auditedInboundChange } from "../configuration/audited-inbound.ts";
import type { ConfigActor } from "../configuration/config-actor.ts";
import { auditedNumber, auditedProfile } from "../configuration/inbound-views.ts";
import {
  addTopicNumber,
  createTopic,
  deleteTopic,
  disableInboundCredential,
  issueInboundCredential,
  listInboundCredentials,
  listTopics,
  removeTopicNumber,
  setTopicDeliveries,
} from "../inbound/topics.ts";
import { normalizeFaxNumber, REGION_NUMBER_CONTEXT } from "../numbers/normalize-number.ts";
import { getTopicSftpDelivery, removeTopicSftpDelivery, setTopicSftpDelivery, type SftpDeliveryView } from "../inbound/sftp-delivery-settings.ts";
import { readServerHostKey } from "../notifications/sftp/sftp-host-key.ts";
import type { Database } from "../store/database.ts";

export interface InboundArgs {
  what: string | undefined;
  action: string | undefined;
  values: {
    customer?: string;
    name?: string;
    topic?: string[];
    number?: string;
    label?: string;
    id?: string;
    "retention-days"?: string;
    json?: boolean;
    "mail-to"?: string;
    attach?: string;
    "push-url"?: string;
    host?: string;
    port?: string;
    user?: string;
    "private-key-file"?: string;
    "key-passphrase"?: string;
    "generate-key"?: boolean;
    "password-file"?: string;
    "host-key"?: string[];
    directory?: string;
    "file-pattern"?: string;
    format?: string;
    metadata?: string;
  };
}

function readSecretFile(file: string, what: string): string {
  try {
    return readFileSync(file === "-" ? 0 : file, "utf8");
  } catch (err) {
    throw new AccountError(`Cannot read the ${what} from ${file === "-" ? "standard input" : file}: ${(err as Error).message}`);
  }
}

function portOption(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65535) throw new AccountError(`--port must be 1 to 65535, got "${text}"`);
  return port;
}

/** The SFTP delivery as the CLI prints it: never a secret. */
export function describeSftpDelivery(topic: string, d: SftpDeliveryView): string[] {
  const lines = [
    `Topic ${topic}: SFTP to ${d.target}`,
    `  host key:     ${d.hostKeys.join(", ")}`,
    `  login:        ${d.username} with ${d.authMethod === "key" ? "a private key" : "a password"}`,
  ];
  if (d.publicKey !== null) lines.push(`  public key:   ${d.publicKey}`, "                (add this line to the user's ~/.ssh/authorized_keys on the server)");
  lines.push(`  files:        ${d.filePattern}.${d.documentFormat === "PDF" ? "pdf" : "tif"} and then ${d.filePattern}.${d.metadataFormat.toLowerCase()}`);
  return lines;
}

function need(value: string | undefined, option: string): string {
  if (value === undefined || value === "") throw new AccountError(`--${option} is required`);
  return value;
}

/** Who changes the configuration from a node's machine, as the audit log names it: the machine's user, as an operator. */
function cliActor(custNr: string): ConfigActor {
  let user = "unknown";
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry for the uid (a container): "unknown".
  }
  return { custNr, login: `cli:${user}@${hostname()}`, role: "operator" };
}

export async function inboundCommand(db: Kysely<Database>, config: FaxlineConfig, { what, action, values }: InboundArgs, now: number): Promise<number> {
  const context = REGION_NUMBER_CONTEXT[config.node.region];
  const key = `${what ?? ""} ${action ?? ""}`;
  // What the configuration API calls a profile (a topic) or a number is changed here as there:
  // in one transaction with its entry in the audit log (configuration/audited-inbound.ts).
  const profileChange = <T>(custNr: string, name: string, change: (trx: Kysely<Database>) => Promise<T>, writesSecret = false): Promise<T> =>
    auditedInboundChange(
      db,
      cliActor(custNr),
      { resource: "inbound/profiles", key: name },
      now,
      (tree) => {
        const view = auditedProfile(tree, name);
        return view !== null && writesSecret ? { ...view, ftpCredentials: "(set)" } : view;
      },
      (trx) => change(trx),
    );
  const numberChange = <T>(custNr: string, number: string, change: (trx: Kysely<Database>) => Promise<T>): Promise<T> => {
    const n = normalizeFaxNumber(number, context);
    const e164 = n.ok ? n.e164 : number;
    return auditedInboundChange(db, cliActor(custNr), { resource: "inbound/numbers", key: e164 }, now, (tree) => auditedNumber(tree, e164), (trx) => change(trx));
  };
  switch (key) {
    case "topic create": {
      const days = values["retention-days"];
      const custNr = need(values.customer, "customer");
      const name = need(values.name, "name");
      await profileChange(custNr, name, (trx) => createTopic(trx, { custNr, name, retentionDays: days === undefined ? null : Number(days) }, now));
      console.log(`Topic ${name} of customer ${custNr} created${days ? `; its faxes are kept ${days} days` : ""}`);
      return 0;
    }
    case "topic delete": {
      const custNr = need(values.customer, "customer");
      const name = need(values.name, "name");
      await profileChange(custNr, name, (trx) => deleteTopic(trx, custNr, name));
      console.log(`Topic ${values.name} deleted with its numbers; faxes received on it stay until their retention ends`);
      return 0;
    }
    case "topic list": {
      const topics = await listTopics(db, values.customer);
      if (values.json) console.log(JSON.stringify(topics, null, 2));
      else if (topics.length === 0) console.log("No topics.");
      else
        for (const t of topics) {
          console.log(`${t.custNr.padEnd(12)} ${t.name.padEnd(24)} ${t.numbers.join(", ") || "(no numbers)"}${t.retentionDays ? `  kept ${t.retentionDays} days` : ""}`);
          if (t.sftp) console.log(`${"".padEnd(37)} SFTP to ${t.sftp.target} (${t.sftp.documentFormat} + ${t.sftp.metadataFormat})`);
        }
      return 0;
    }
    case "topic set-delivery": {
      const custNr = need(values.customer, "customer");
      const name = need(values.name, "name");
      await profileChange(custNr, name, (trx) =>
        setTopicDeliveries(trx, custNr, name, {
          mailTo: values["mail-to"] === undefined ? undefined : values["mail-to"].split(",").map((a) => a.trim()).filter((a) => a !== ""),
          mailAttachment: values.attach,
          pushUrl: values["push-url"],
        }),
      );
      const t = (await listTopics(db, custNr)).find((x) => x.name === name)!;
      console.log(`Topic ${name}: mail to ${t.mailTo.join(", ") || "(nobody)"} (attach ${t.mailAttachment}), push to ${t.pushUrl ?? "(no URL)"}`);
      return 0;
    }
    case "topic sftp-host-key": {
      let host = values.host;
      let port = portOption(values.port) ?? 22;
      if (host === undefined) {
        const d = await getTopicSftpDelivery(db, need(values.customer, "customer"), need(values.name, "name"));
        if (d === null) throw new AccountError(`Topic ${values.name} has no SFTP delivery; give --host (and --port) of the server to read its key`);
        host = d.host;
        port = values.port === undefined ? d.port : port;
      }
      const key = await readServerHostKey(host, port, config.sftp.timeout).catch((err: Error) => {
        throw new AccountError(err.message);
      });
      console.log(key.fingerprint);
      console.error(
        `The SSH server ${host}:${port} presents the ${key.type} host key ${key.fingerprint}.\n` +
          "Compare it with the server's own (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on the server, or ask its administrator) before you pin it with --host-key: " +
          "a fingerprint read over the network alone proves nothing against a connection that is intercepted.",
      );
      return 0;
    }
    case "topic set-sftp": {
      const custNr = need(values.customer, "customer");
      const name = need(values.name, "name");
      const keyFile = values["private-key-file"];
      const passwordFile = values["password-file"];
      const secret = keyFile !== undefined || passwordFile !== undefined || values["generate-key"] === true;
      const change = {
        host: values.host,
        port: portOption(values.port),
        username: values.user,
        hostKeys: values["host-key"],
        privateKey: keyFile === undefined ? undefined : readSecretFile(keyFile, "private key"),
        keyPassphrase: values["key-passphrase"],
        generateKey: values["generate-key"] === true,
        password: passwordFile === undefined ? undefined : readSecretFile(passwordFile, "password").replace(/\r?\n$/, ""),
        directory: values.directory,
        filePattern: values["file-pattern"],
        documentFormat: values.format,
        metadataFormat: values.metadata,
      };
      const view = await profileChange(custNr, name, (trx) => setTopicSftpDelivery(trx, custNr, name, change, now), secret);
      for (const line of describeSftpDelivery(name, view)) console.log(line);
      return 0;
    }
    case "topic remove-sftp": {
      const name = need(values.name, "name");
      const custNr = need(values.customer, "customer");
      const removed = await profileChange(custNr, name, (trx) => removeTopicSftpDelivery(trx, custNr, name));
      console.log(removed ? `Topic ${name} no longer delivers to an SFTP server` : `Topic ${name} had no SFTP delivery`);
      return 0;
    }
    case "number add": {
      const topic = need(values.topic?.[0], "topic");
      const custNr = need(values.customer, "customer");
      const number = need(values.number, "number");
      const e164 = await numberChange(custNr, number, (trx) => addTopicNumber(trx, { custNr, topic, number }, context, now));
      console.log(`${e164} receives into topic ${topic}`);
      return 0;
    }
    case "number remove": {
      const custNr = need(values.customer, "customer");
      const number = need(values.number, "number");
      const e164 = await numberChange(custNr, number, (trx) => removeTopicNumber(trx, custNr, number, context));
      console.log(`${e164} no longer receives`);
      return 0;
    }
    case "credential issue": {
      const custNr = need(values.customer, "customer");
      const { id, password } = await issueInboundCredential(db, { custNr, topics: values.topic ?? null, label: values.label ?? null }, now);
      console.log(password);
      console.error(`Pull API password ${id} for customer ${custNr}${values.topic?.length ? ` (topics ${values.topic.join(", ")})` : " (all topics)"}, shown once above. User name: ${custNr}`);
      return 0;
    }
    case "credential list": {
      const list = await listInboundCredentials(db, need(values.customer, "customer"));
      if (values.json) console.log(JSON.stringify(list, null, 2));
      else if (list.length === 0) console.log("No pull API passwords.");
      else for (const c of list) console.log(`${c.id}  ${c.disabled ? "disabled" : "active  "}  ${c.topics?.join(",") ?? "all topics"}  ${c.label ?? ""}  ${c.createdAt}`);
      return 0;
    }
    case "credential disable": {
      await disableInboundCredential(db, need(values.id, "id"), now);
      console.log(`Pull API password ${values.id} disabled`);
      return 0;
    }
    default:
      throw new AccountError(`Unknown inbound command "${key.trim()}" (faxline inbound topic|number|credential …; see faxline --help)`);
  }
}
