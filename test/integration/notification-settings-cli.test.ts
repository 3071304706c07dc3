/**
 * The operator commands for notifications, run as the real `faxline` command on a store:
 * push settings, signing secret rotation, template installation (refused when it does not parse).
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/test-node.ts";
import { createAccountWithCli, runFaxlineCli } from "../support/child-node.ts";
import { isSigningSecret } from "../../src/notifications/push/sign-webhook.ts";

describe("faxline accounts set-push / rotate-signing-secret / templates", () => {
  const dir = tempDir("faxline-push-cli-");
  after(() => dir.remove());
  const env = { FAXLINE_DATA_DIR: dir.path, FAXLINE_LOG_LEVEL: "warn" };
  const cli = (...args: string[]) => runFaxlineCli(args, env);

  it("sets, shows and explains push settings, secrets and templates", async () => {
    await createAccountWithCli(dir.path, { custNr: "CLI1", login: "cli", password: "cli-pass-1" });

    const set = await cli("accounts", "set-push", "--customer", "CLI1", "--url", "https://erp.example.com/fax", "--format", "json", "--events", "attempt.failed");
    assert.equal(set.code, 0, set.stderr);
    const bad = await cli("accounts", "set-push", "--customer", "CLI1", "--events", "job.sent");
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /"job.sent" is not an optional push event; choose from recipient.completed, attempt.failed/);

    const first = await cli("accounts", "rotate-signing-secret", "--customer", "CLI1");
    const second = await cli("accounts", "rotate-signing-secret", "--customer", "CLI1");
    assert.ok(isSigningSecret(first.stdout.trim()) && isSigningSecret(second.stdout.trim()));
    assert.match(second.stderr, /two signatures/);

    const good = join(dir.path, "layout.xml");
    writeFileSync(good, "<s>{{#faxRecipient}}{{number}}{{/faxRecipient}}</s>");
    assert.equal((await cli("templates", "install", "--customer", "CLI1", "--kind", "push", "--file", good)).code, 0);
    const broken = join(dir.path, "broken.txt");
    writeFileSync(broken, "Fax {{#recipients}} for {{jobId}}");
    const refused = await cli("templates", "install", "--customer", "CLI1", "--kind", "mail-text", "--file", broken);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /mail-text template cannot be used: .*line 1, column 5.*never closed/);

    const shown = await cli("accounts", "show-push", "--customer", "CLI1", "--json");
    assert.equal(shown.code, 0, shown.stderr);
    assert.deepEqual(JSON.parse(shown.stdout), {
      custNr: "CLI1",
      pushUrl: "https://erp.example.com/fax",
      pushFormat: "JSON",
      pushEvents: ["attempt.failed"],
      oauth2TokenUrl: null,
      signingSecrets: 2,
      reportMail: null,
      templates: [{ kind: "push", name: "default", contentType: "application/xml; charset=utf-8", bytes: 51 }],
    });

    // The account's e-mail report, for jobs that ask for none.
    const badMail = await cli("accounts", "set-report-mail", "--customer", "CLI1", "--success", "no-address");
    assert.equal(badMail.code, 1);
    assert.match(badMail.stderr, /"no-address" is not an e-mail address/);
    const mail = await cli("accounts", "set-report-mail", "--customer", "CLI1", "--failure", "fax-errors@example.com", "--attach", "failure_only", "--attach-format", "pdf");
    assert.equal(mail.code, 0, mail.stderr);
    assert.match(mail.stdout, /e-mail report: +success -, failure fax-errors@example.com, attach FAILURE_ONLY as PDF/);
    const cleared = await cli("accounts", "set-report-mail", "--customer", "CLI1");
    assert.match(cleared.stdout, /e-mail report: +\(none/);
  });
});
