/**
 * Fax-to-SFTP against a real OpenSSH server (Debian's sshd with internal-sftp, started here on a
 * free port with its own host key; test/support/sftp-server.ts): a fax received on the test line
 * lands as document and then metadata file, each written under a temporary name and renamed;
 * a server that is down, full or refuses the key is retried and then shown as failed with a
 * reason a person can act on, and redelivery gets it through once that is fixed; a server whose
 * host key is not the pinned one is refused at once and gets nothing. On both dialects.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, watch } from "node:fs";
import { join } from "node:path";
import { addTopicNumber, createTopic } from "../../src/inbound/topics.ts";
import { setTopicSftpDelivery } from "../../src/inbound/sftp-delivery-settings.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { listJobNotifications, redeliverNotification } from "../../src/store/queries/notifications.ts";
import { newClientKey } from "../../src/notifications/sftp/sftp-host-key.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { SftpServer, systemUser } from "../support/sftp-server.ts";
import { createAccountWithCli, runFaxlineCli } from "../support/child-node.ts";
import { api, createTestLogin, eventually, startTestNode, tempDir, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";

const FINAL = ["delivered", "failed"];

/** A console session over HTTP: the cookie, and the CSRF token on changes. */
async function consoleSession(base: string, login: string, password: string) {
  const signIn = await fetch(`${base}/console/api/session`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ login, password }) });
  assert.equal(signIn.status, 200, await signIn.clone().text());
  const cookie = /faxline_session=[^;]*/.exec(signIn.headers.get("set-cookie") ?? "")![0];
  const csrf = ((await signIn.json()) as { csrfToken: string }).csrfToken;
  return async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { cookie, "x-csrf-token": csrf };
    if (body !== undefined) headers["content-type"] = "application/json";
    // The console's own routes, or the configuration API the page uses with the session.
    const url = path.startsWith("/config/v2/") ? `${base}${path}` : `${base}/console/api${path}`;
    const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, text, body: text === "" ? null : (JSON.parse(text) as any) };
  };
}

for (const dialect of DIALECTS) {
  describe(`${dialect}: fax-to-SFTP`, () => {
    const store = withDialect(dialect);
    let node: TestNode;
    const acme = { custNr: "91002", login: "acme-sftp", password: "acme-password" };
    const manager = { custNr: "91002", login: "acme-sftp-manager", password: "manager-password" };
    // The delivery's own key pair, made by the settings (generateKey) in the first test's topic.
    const clientKey = newClientKey("faxline-test-client");
    const servers: SftpServer[] = [];
    let numberSeq = 0;

    const db = () => node.node.context.store.db;

    /** A topic with one number and an SFTP delivery to `server`; returns the number. */
    async function topicTo(server: SftpServer, change: Parameters<typeof setTopicSftpDelivery>[3] = {}): Promise<{ topic: string; number: string }> {
      numberSeq += 1;
      const topic = `sftp-${numberSeq}`;
      const number = `+49 40 555 02${String(numberSeq).padStart(2, "0")}`;
      await createTopic(db(), { custNr: acme.custNr, name: topic }, Date.now());
      await addTopicNumber(db(), { custNr: acme.custNr, topic, number }, REGION_NUMBER_CONTEXT.DE, Date.now());
      const login = change.password !== undefined || change.generateKey === true || change.privateKey !== undefined ? {} : { privateKey: clientKey.privateKey };
      await setTopicSftpDelivery(db(), acme.custNr, topic, { host: "127.0.0.1", port: server.port, username: "root", ...login, hostKeys: [server.fingerprint()], directory: server.incoming, ...change }, Date.now());
      return { topic, number };
    }

    /** Faxes `number` from the test account (the test line receives it) and returns the received fax's SFTP delivery once it is final. */
    async function faxAndDeliver(number: string) {
      const client = api(node.url, acme);
      const sent = await client.post(`/${acme.custNr}/fax`, { recipients: [{ number }], documents: [TEXT_DOC] });
      assert.equal(sent.status, 201, JSON.stringify(sent.body));
      await waitForFinalReport(client, acme.custNr, sent.body.jobId);
      const fax = await eventually(
        () => db().selectFrom("received_faxes").selectAll().where("source_job_id", "=", sent.body.jobId).executeTakeFirst(),
        10_000,
        "the reception",
      );
      return { fax, delivery: await finalDelivery(fax.id) };
    }

    async function finalDelivery(faxId: string) {
      return eventually(
        async () => {
          const log = (await listJobNotifications(db(), faxId)).find((d) => d.notification.channel === "sftp");
          return log && FINAL.includes(log.notification.state) ? log : undefined;
        },
        20_000,
        "the SFTP delivery to end",
      );
    }

    async function redelivered(faxId: string, notificationId: string) {
      return eventually(
        async () => {
          const log = (await listJobNotifications(db(), faxId)).find((d) => d.notification.id === notificationId)!;
          return log.notification.state === "delivered" ? log : undefined;
        },
        20_000,
        "the redelivery",
      );
    }

    async function server(options: ConstructorParameters<typeof SftpServer>[0] = {}): Promise<SftpServer> {
      const s = new SftpServer({ authorizedKeys: [clientKey.publicKey], ...options });
      servers.push(s);
      await s.start();
      return s;
    }

    before(async () => {
      node = await startTestNode({
        ...store.overrides(),
        "sftp.allowTargets": "127.0.0.1",
        "sftp.retrySchedule": "100ms,100ms",
        "sftp.timeout": "10s",
        "push.jitterPercent": 0,
      });
      await createTestLogin(node, acme);
      await createTestLogin(node, { ...manager, isManager: true });
    });
    after(async () => {
      await node.stop();
      await Promise.all(servers.map((s) => s.remove()));
      await store.store().drop();
    });

    it("writes the PDF and then the JSON metadata, each under a temporary name renamed when complete", async () => {
      const s = await server();
      const { number } = await topicTo(s);
      // What appears and disappears in the directory, in order (inotify).
      const seen: string[] = [];
      const watcher = watch(s.incoming, (_event, name) => {
        if (name !== null && seen.at(-1) !== name) seen.push(name);
      });
      const { fax, delivery } = await faxAndDeliver(number);
      assert.equal(delivery.notification.state, "delivered", delivery.notification.last_error ?? "");
      assert.equal(delivery.notification.target, `sftp://root@127.0.0.1:${s.port}${s.incoming}`);

      const files = readdirSync(s.incoming).sort();
      const base = `${new Date(Number(fax.received_at)).toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-")}_49405550201_${fax.id}`;
      assert.deepEqual(files, [`${base}.json`, `${base}.pdf`], "the document and its metadata, nothing left under a temporary name");

      const info = spawnSync("pdfinfo", [join(s.incoming, `${base}.pdf`)], { encoding: "utf8" });
      assert.equal(info.status, 0, info.stderr);
      assert.match(info.stdout, /^Pages:\s+1$/m);

      const meta = JSON.parse(readFileSync(join(s.incoming, `${base}.json`), "utf8"));
      assert.deepEqual(meta.Fax.FaxFile, [{ FileType: "pdf", FileName: `${base}.pdf` }]);
      const d = meta.Fax.FaxDetails;
      assert.equal(d.JobID, fax.id);
      assert.equal(d.CalledNumber, "+49405550201");
      assert.equal(d.Topic, "sftp-1");
      assert.equal(d.PageCount, "1");
      assert.equal(d.Status, "OK");
      assert.equal(d.RemoteCSID, fax.remote_csid);
      assert.equal(d.DateReceived, `${new Date(Number(fax.received_at)).toISOString().slice(0, 19)}+0000`);

      // Each file written under .<name>.part and renamed when complete; the metadata file last.
      await eventually(async () => (seen.includes(`${base}.json`) ? true : undefined), 5_000, "the watcher to see the metadata file");
      watcher.close();
      assert.deepEqual(seen, [`.${base}.pdf.part`, `${base}.pdf`, `.${base}.json.part`, `${base}.json`]);
      assert.match(delivery.tries[0]!.response_excerpt ?? "", new RegExp(`Wrote ${base}\\.pdf \\(\\d+ bytes\\) and ${base}\\.json`));
    });

    it("writes TIFF and XML under the topic's file name pattern", async () => {
      const s = await server();
      const { number } = await topicTo(s, { filePattern: "fax_{topic}_{calling}_{id}", documentFormat: "TIFF", metadataFormat: "XML" });
      const { fax, delivery } = await faxAndDeliver(number);
      assert.equal(delivery.notification.state, "delivered", delivery.notification.last_error ?? "");
      const base = `fax_sftp-2_${(fax.from_number ?? "unknown").replace(/^\+/, "")}_${fax.id}`;
      assert.deepEqual(readdirSync(s.incoming).sort(), [`${base}.tif`, `${base}.xml`]);
      const info = spawnSync("tiffinfo", [join(s.incoming, `${base}.tif`)], { encoding: "utf8" });
      assert.equal(info.status, 0, info.stderr);
      assert.match(info.stdout, /Image Width: 1728/);
      assert.deepEqual(readFileSync(join(s.incoming, `${base}.tif`)), Buffer.from(fax.image!), "the TIFF as received");
      const xml = readFileSync(join(s.incoming, `${base}.xml`), "utf8");
      assert.match(xml, new RegExp(`<JobID>${fax.id}</JobID>`));
      assert.match(xml, /<FileType>tiff<\/FileType>/);
      assert.match(xml, new RegExp(`<FileName>${base}\\.tif</FileName>`));
      assert.match(xml, /<PageCount>1<\/PageCount>/);
    });

    it("retries a server that is down, shows it failed with the reason, and redelivers once it is up", async () => {
      const s = await server();
      const { number } = await topicTo(s);
      await s.stop();
      const { fax, delivery } = await faxAndDeliver(number);
      assert.equal(delivery.notification.state, "failed");
      assert.deepEqual(delivery.tries.map((t) => t.outcome), ["retry", "retry", "failed"], "retried on the schedule, then given up");
      assert.match(delivery.tries[0]!.error ?? "", new RegExp(`Could not talk to the SFTP server 127\\.0\\.0\\.1:${s.port}: the server refused the connection \\(ECONNREFUSED\\)`));
      assert.match(delivery.notification.last_error ?? "", /gave up after 3 tries .*ECONNREFUSED/);

      await s.start();
      assert.equal(await redeliverNotification(db(), fax.id, delivery.notification.id, Date.now()), "queued");
      node.node.context.wake.notify.notify();
      const again = await redelivered(fax.id, delivery.notification.id);
      assert.equal(again.tries.at(-1)!.outcome, "delivered");
      assert.equal(readdirSync(s.incoming).length, 2);
    });

    it("retries a server whose disk is full, and leaves no partial file behind", async () => {
      const s = await server({ fileSizeLimitKiB: 1 });
      const { number } = await topicTo(s);
      const { delivery } = await faxAndDeliver(number);
      assert.equal(delivery.notification.state, "failed");
      assert.deepEqual(delivery.tries.map((t) => t.outcome), ["retry", "retry", "failed"]);
      const first = delivery.tries[0]!;
      assert.equal(first.status_code, 4, "SSH_FX_FAILURE");
      assert.match(first.error ?? "", /failed to write .*\.pdf\.part \(it answered "Failure"\); its disk may be full or the user's quota used up/);
      assert.deepEqual(readdirSync(s.incoming), [], "the temporary file was removed");
    });

    it("retries a server that refuses the key, then delivers once the public key is authorised", async () => {
      const s = await server({ authorizedKeys: [] });
      const { number } = await topicTo(s);
      const { fax, delivery } = await faxAndDeliver(number);
      assert.equal(delivery.notification.state, "failed");
      assert.deepEqual(delivery.tries.map((t) => t.outcome), ["retry", "retry", "failed"]);
      assert.match(delivery.tries[0]!.error ?? "", /refused the login of user root with the delivery's private key; add its public key .* to that user's authorized_keys/);

      s.setAuthorizedKeys([clientKey.publicKey]);
      assert.equal(await redeliverNotification(db(), fax.id, delivery.notification.id, Date.now()), "queued");
      node.node.context.wake.notify.notify();
      await redelivered(fax.id, delivery.notification.id);
      assert.equal(readdirSync(s.incoming).length, 2);
    });

    it("refuses a server whose host key is not the pinned one at once, and writes nothing", async () => {
      const s = await server();
      const impostor = new SftpServer(); // another host key: what a pinned fingerprint must not accept
      servers.push(impostor);
      const { number } = await topicTo(s, { hostKeys: [impostor.fingerprint()] });
      const { delivery } = await faxAndDeliver(number);
      assert.equal(delivery.notification.state, "failed");
      assert.deepEqual(delivery.tries.map((t) => t.outcome), ["failed"], "not retried");
      assert.match(
        delivery.notification.last_error ?? "",
        new RegExp(`presented the host key ${s.fingerprint().replace(/[+/]/g, "\\$&")} \\(ssh-ed25519\\), which is not the one pinned for this delivery \\(${impostor.fingerprint().replace(/[+/]/g, "\\$&")}\\)\\. Nothing was sent`),
      );
      assert.deepEqual(readdirSync(s.incoming), []);
      assert.doesNotMatch(s.stderr, /Accepted publickey/, "no login was attempted");
    });

    it("logs in with a password, as a user of the server's own", async () => {
      const user = systemUser();
      try {
        const s = await server({ passwordUser: user });
        const { topic, number } = await topicTo(s, { username: user.name, password: user.password });
        const { fax, delivery } = await faxAndDeliver(number);
        assert.equal(delivery.notification.state, "delivered", delivery.notification.last_error ?? "");
        const files = readdirSync(s.incoming);
        assert.equal(files.length, 2);
        for (const f of files) assert.equal(statSync(join(s.incoming, f)).uid, Number(spawnSync("id", ["-u", user.name], { encoding: "utf8" }).stdout.trim()), "written as that user");
        assert.ok(files.every((f) => f.includes(fax.id)));
        const listed = JSON.stringify(await import("../../src/inbound/topics.ts").then((m) => m.listTopics(db(), acme.custNr)));
        assert.ok(listed.includes(`"topic":"${topic}"`) || listed.includes(topic));
        assert.ok(!listed.includes(user.password), "the password is never listed");
      } finally {
        user.remove();
      }
    });

    it("is set in the console with an encrypted key, reads the server's host key, and shows and redelivers the delivery", async () => {
      const s = await server();
      // A passphrase-protected key as ssh-keygen writes it; its public half goes to authorized_keys.
      const keyFile = join(s.dir, "client_key");
      const made = spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "console-pass", "-C", "console", "-f", keyFile]);
      assert.equal(made.status, 0, String(made.stderr));
      const privateKey = readFileSync(keyFile, "utf8");
      const publicKey = readFileSync(`${keyFile}.pub`, "utf8").split(" ").slice(0, 2).join(" ");
      s.setAuthorizedKeys([publicKey]);

      numberSeq += 1;
      const topic = `console-${numberSeq}`;
      const number = `+49 40 555 03${String(numberSeq).padStart(2, "0")}`;
      await createTopic(db(), { custNr: acme.custNr, name: topic }, Date.now());
      await addTopicNumber(db(), { custNr: acme.custNr, topic, number }, REGION_NUMBER_CONTEXT.DE, Date.now());

      const boss = await consoleSession(node.url, manager.login, manager.password);
      const clerk = await consoleSession(node.url, acme.login, acme.password);

      const read = await boss("POST", "/sftp-host-key", { host: "127.0.0.1", port: s.port });
      assert.equal(read.status, 200, read.text);
      assert.deepEqual(read.body, { fingerprint: s.fingerprint(), type: "ssh-ed25519" }, "the fingerprint ssh-keygen -l prints");
      const guarded = await boss("POST", "/sftp-host-key", { host: "10.0.0.1", port: 22 });
      assert.equal(guarded.status, 400);
      assert.match(guarded.body.message, /does not connect to 10\.0\.0\.1: .*sftp\.allowTargets/);

      const settings = { host: "127.0.0.1", port: s.port, username: "root", hostKeys: [read.body.fingerprint], authMethod: "key", privateKey, directory: s.incoming, documentFormat: "PDF", metadataFormat: "XML" };
      // The page sets it through the configuration API (the profile's ftp) with the session.
      const profile = `/config/v2/inbound/profiles/${topic}`;
      const clerkSet = await clerk("PATCH", profile, { ftp: settings });
      assert.equal(clerkSet.status, 403, "only managers change it");
      assert.equal(clerkSet.body.error, "config_access_denied");
      const noPassphrase = await boss("PATCH", profile, { ftp: settings });
      assert.equal(noPassphrase.status, 400);
      assert.match(noPassphrase.body.message, /The private key is encrypted; give its passphrase/);
      const badFingerprint = await boss("PATCH", profile, { ftp: { ...settings, keyPassphrase: "console-pass", hostKeys: ["MD5:00:11"] } });
      assert.equal(badFingerprint.status, 400);
      assert.match(badFingerprint.body.message, /is not a SHA-256 host key fingerprint/);
      const badPattern = await boss("PATCH", profile, { ftp: { ...settings, keyPassphrase: "console-pass", filePattern: "../{id}" } });
      assert.equal(badPattern.status, 400);
      assert.match(badPattern.body.message, /only letters, digits, "\.", "_", "-" and placeholders in braces, not "\/"/);

      const saved = await boss("PATCH", profile, { ftp: { ...settings, keyPassphrase: "console-pass" } });
      assert.equal(saved.status, 200, saved.text);
      assert.equal(saved.body.ftp.publicKey, publicKey, "the public key to authorise, derived from the stored key");
      const listed = await clerk("GET", "/topics");
      const shown = listed.body.topics.find((t: { name: string }) => t.name === topic);
      assert.equal(shown.sftp.target, `sftp://root@127.0.0.1:${s.port}${s.incoming}`);
      const audit = await boss("GET", `/config/v2/audit?resource=inbound/profiles&key=${topic}`);
      for (const secret of ["console-pass", privateKey.split("\n")[1]!]) {
        assert.ok(!listed.text.includes(secret) && !saved.text.includes(secret) && !audit.text.includes(secret), "no secret is ever sent back, nor written in the audit log");
      }

      // A change that gives no key keeps the stored one; switching to a password needs the password.
      assert.equal((await boss("PATCH", profile, { ftp: { directory: s.incoming, metadataFormat: "XML", authMethod: "key", privateKey: "" } })).status, 200);
      const noPassword = await boss("PATCH", profile, { ftp: { authMethod: "password", password: "" } });
      assert.equal(noPassword.status, 400);
      assert.match(noPassword.body.message, /To log in with a password, give the password/);

      // The key is refused first (authorized_keys emptied), then authorised and redelivered from the console.
      s.setAuthorizedKeys([]);
      const { fax, delivery } = await faxAndDeliver(number);
      assert.equal(delivery.notification.state, "failed");
      const page = await clerk("GET", `/received/${fax.id}`);
      const entry = page.body.deliveries.find((d: { channel: string }) => d.channel === "sftp");
      assert.equal(entry.target, `sftp://root@127.0.0.1:${s.port}${s.incoming}`);
      assert.equal(entry.state, "failed");
      assert.match(entry.lastError, /refused the login of user root/);
      s.setAuthorizedKeys([publicKey]);
      const again = await clerk("POST", `/received/${fax.id}/deliveries/${entry.id}/redeliver`);
      assert.equal(again.status, 202, again.text);
      await redelivered(fax.id, entry.id);
      assert.deepEqual(readdirSync(s.incoming).map((f) => f.split(".").at(-1)).sort(), ["pdf", "xml"]);

      assert.equal((await boss("PATCH", profile, { ftp: null })).status, 200);
      assert.equal((await clerk("GET", "/topics")).body.topics.find((t: { name: string }) => t.name === topic).sftp, null);
    });
  });
}

describe("faxline inbound topic set-sftp / sftp-host-key (the compiled CLI)", () => {
  const dir = tempDir();
  const s = new SftpServer();
  before(() => s.start());
  after(async () => {
    await s.remove();
    dir.remove();
  });
  const cli = (...args: string[]) => runFaxlineCli(args, { FAXLINE_DATA_DIR: dir.path, FAXLINE_LOG_LEVEL: "warn" });

  it("reads the server's host key, sets a delivery with a new key, and lists it without secrets", async () => {
    const read = await cli("inbound", "topic", "sftp-host-key", "--host", "127.0.0.1", "--port", String(s.port));
    assert.equal(read.code, 0, read.stderr);
    assert.equal(read.stdout.trim(), s.fingerprint(), "what ssh-keygen -l prints for the server's key");
    assert.match(read.stderr, /presents the ssh-ed25519 host key SHA256:\S+\.\nCompare it with the server's own/);

    await createAccountWithCli(dir.path, { custNr: "91003", login: "cli-sftp", password: "cli-password" });
    assert.equal((await cli("inbound", "topic", "create", "--customer", "91003", "--name", "archive")).code, 0);
    const refused = await cli("inbound", "topic", "set-sftp", "--customer", "91003", "--name", "archive", "--host", "127.0.0.1", "--user", "root", "--generate-key");
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /An SFTP delivery needs the host key fingerprint/);
    const set = await cli(
      "inbound", "topic", "set-sftp", "--customer", "91003", "--name", "archive", "--host", "127.0.0.1", "--port", String(s.port),
      "--user", "root", "--generate-key", "--host-key", read.stdout.trim(), "--directory", s.incoming, "--format", "tiff", "--metadata", "xml",
    );
    assert.equal(set.code, 0, set.stderr);
    const publicKey = /public key:\s+(ssh-ed25519 \S+)/.exec(set.stdout)?.[1];
    assert.ok(publicKey, set.stdout);
    assert.match(set.stdout, new RegExp(`SFTP to sftp://root@127\\.0\\.0\\.1:${s.port}${s.incoming}`));

    const list = await cli("inbound", "topic", "list", "--customer", "91003", "--json");
    assert.equal(list.code, 0, list.stderr);
    const [topic] = JSON.parse(list.stdout);
    assert.equal(topic.sftp.publicKey, publicKey);
    assert.equal(topic.sftp.documentFormat, "TIFF");
    assert.doesNotMatch(list.stdout, /PRIVATE KEY/, "the private key is never shown");
    const plain = await cli("inbound", "topic", "list", "--customer", "91003");
    assert.match(plain.stdout, /SFTP to sftp:\/\/root@127\.0\.0\.1:\d+\S+ \(TIFF \+ XML\)/);
  });
});
