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
import { readdirSync, readFileSync, watch } from "node:fs";
import { join } from "node:path";
import { addTopicNumber, createTopic } from "../../src/inbound/topics.ts";
import { setTopicSftpDelivery } from "../../src/inbound/sftp-delivery-settings.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { listJobNotifications, redeliverNotification } from "../../src/store/queries/notifications.ts";
import { newClientKey } from "../../src/notifications/sftp/sftp-host-key.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { SftpServer } from "../support/sftp-server.ts";
import { api, createTestLogin, eventually, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";

const FINAL = ["delivered", "failed"];

for (const dialect of DIALECTS) {
  describe(`${dialect}: fax-to-SFTP`, () => {
    const store = withDialect(dialect);
    let node: TestNode;
    const acme = { custNr: "91002", login: "acme-sftp", password: "acme-password" };
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
      await setTopicSftpDelivery(
        db(),
        acme.custNr,
        topic,
        { host: "127.0.0.1", port: server.port, username: "root", privateKey: clientKey.privateKey, hostKeys: [server.fingerprint()], directory: server.incoming, ...change },
        Date.now(),
      );
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
      watcher.close();
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
  });
}
