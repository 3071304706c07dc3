/**
 * Nothing a mail-to-fax node answered 250 is lost, and nothing is faxed twice, when the node is
 * SIGKILLed right after the 250 (docs/mail-to-fax.md "Durability"; ADR 0021). A real
 * `faxline serve` child with the mail-to-fax role takes mails over SMTP with STARTTLS; the
 * instant the last 250 arrives the child is killed, with one more mail on the wire that gets no
 * answer. After the restart on the same store every answered mail's job is delivered once, and
 * the unanswered mail, sent again as a sending server does, is answered 250 once: a new job if
 * the first node had not stored it, the stored one if it had; never two.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createLogin } from "../../src/accounts/accounts.ts";
import { putMailToFaxCustomer, putMailToFaxUser } from "../../src/store/queries/mail-to-fax.ts";
import { freePort, startChildNode, stopAllChildNodes, withChildLogs, type ChildNode } from "../support/child-node.ts";
import { DIALECTS, openTestStore, withDialect } from "../support/dialects.ts";
import { makeCertificate, sendMail } from "../support/mail-to-fax-client.ts";
import { api, eventually, tempDir } from "../support/test-node.ts";

const ACCOUNT = { custNr: "99999TE", login: "m2f-kill", password: "secret-pass-1" };
const FAX_DOMAIN = "fax.example.test";
const MAILS = 6;

for (const dialect of DIALECTS) describe(`${dialect}: mail-to-fax across a SIGKILL`, () => {
  const store = withDialect(dialect);
  const dir = tempDir("faxline-m2f-kill-");
  after(async () => {
    await stopAllChildNodes();
    dir.remove();
  });

  it("sends every fax answered 250 before the kill, once, and the mail cut off once", async () => {
    const tls = makeCertificate(dir.path);
    const ca = readFileSync(tls.cert);
    const setup = await openTestStore(store.store(), dir.path);
    const now = Date.now();
    await createLogin(setup.db, { ...ACCOUNT, isTest: true, isAdmin: false, isManager: false, ipAllowList: null, retentionDays: null }, now);
    await putMailToFaxCustomer(setup.db, { custNr: ACCOUNT.custNr, login: ACCOUNT.login, settings: {} }, now);
    await putMailToFaxUser(setup.db, { email: "alice@example.org", custNr: ACCOUNT.custNr, profile: null, active: true, settings: {} }, now);
    await setup.close();

    const smtpPort = await freePort();
    const env = {
      ...store.env(),
      FAXLINE_NODE_ID: "m2f-kill-node",
      FAXLINE_ROLES: "api,scheduler,sender,notifier,retention,mail-to-fax",
      FAXLINE_MAIL_TO_FAX_HOST: "127.0.0.1",
      FAXLINE_MAIL_TO_FAX_PORT: String(smtpPort),
      FAXLINE_MAIL_TO_FAX_DOMAINS: FAX_DOMAIN,
      FAXLINE_MAIL_TO_FAX_TLS_CERT_FILE: tls.cert,
      FAXLINE_MAIL_TO_FAX_TLS_KEY_FILE: tls.key,
      FAXLINE_MAIL_TO_FAX_USERS_WITHOUT_PROOF: "true",
    };
    const mail = (i: number) => ({ from: "alice@example.org", to: `+49305550${String(100 + i)}@${FAX_DOMAIN}`, subject: `Kill ${i}`, text: `Mail ${i}`, messageId: `<kill-${i}-${dialect}@example.org>` });
    let first: ChildNode | undefined;
    let second: ChildNode | undefined;
    await withChildLogs(
      () => [first, second],
      async () => {
        // A slow test line: the first node is killed long before any of the calls ends.
        first = await startChildNode({ name: "first life", dataDir: dir.path, env, timeScale: "0.5" });
        const answered: string[] = [];
        for (let i = 0; i < MAILS - 1; i++) {
          const sent = await sendMail(smtpPort, ca, mail(i));
          assert.ok(sent.ok, sent.response);
          answered.push(/fax job (FJ\S+)/.exec(sent.response)![1]!);
        }
        // The last one: killed the moment its 250 arrives, with the next mail on the wire.
        const last = await sendMail(smtpPort, ca, mail(MAILS - 1));
        assert.ok(last.ok, last.response);
        answered.push(/fax job (FJ\S+)/.exec(last.response)![1]!);
        const cutOff = sendMail(smtpPort, ca, mail(MAILS));
        first.kill("SIGKILL");
        assert.equal((await first.waitForExit()).signal, "SIGKILL");
        const lost = await cutOff;
        assert.ok(!lost.ok, "the node died before it could answer the mail on the wire");

        second = await startChildNode({ name: "second life", dataDir: dir.path, env });
        // The sending server sends the unanswered mail again.
        const again = await eventually(async () => {
          const r = await sendMail(smtpPort, ca, mail(MAILS));
          return r.ok ? r : undefined;
        }, 20_000, "the second life's listener to take the mail sent again");
        const againId = /fax job (FJ\S+)/.exec(again.response)![1]!;

        const client = api(second.url, ACCOUNT);
        for (const jobId of [...answered, againId]) {
          const report = await eventually(
            async () => {
              const r = await client.get(`/${ACCOUNT.custNr}/fax/reports/${jobId}`);
              return r.status === 200 && r.body.recipientStatus.every((s: { status: string }) => s.status !== "PENDING") ? r.body : undefined;
            },
            60_000,
            `job ${jobId} to end`,
          );
          assert.deepEqual(report.recipientStatus.map((s: { status: string }) => s.status), ["OK"], jobId);
        }
        // One job per mail: the reports list has each subject once, and each job one OK call.
        const list = await client.get(`/${ACCOUNT.custNr}/fax/reports`);
        assert.equal(list.status, 200);
        const ids: string[] = list.body.reports.map((r: { jobId: string }) => r.jobId);
        assert.equal(ids.length, MAILS + 1, `one job per mail, got ${ids.join(", ")}`);
        assert.deepEqual(new Set(ids), new Set([...answered, againId]));
        for (const jobId of ids) {
          const r = await client.get(`/${ACCOUNT.custNr}/fax/reports/${jobId}`);
          assert.equal(r.body.recipientStatus[0].status, "OK");
        }
      },
    );
  });
});
