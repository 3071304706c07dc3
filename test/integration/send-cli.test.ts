/**
 * `faxline send` (src/cli/send-through-node.ts): the README's first fax, through a running node's
 * REST API, with progress until the job is final. The CLI runs as its own process against a node
 * whose test line runs at a tenth of real time and retries busy numbers after 1 s, so that the
 * progress of a retried job can be seen.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { runFaxlineCli } from "../support/child-node.ts";
import { createTestLogin, startTestNode, tempDir, type TestNode } from "../support/test-node.ts";
import { documentNameFor } from "../../src/cli/send-through-node.ts";

describe("faxline send: a fax through a running node, followed until final", () => {
  let node: TestNode;
  const files = tempDir("faxline-send-cli-");
  const hello = join(files.path, "hello fax (1).txt");
  const creds = { custNr: "99999TE", login: "demo", password: "demo-password" };
  const auth = ["--customer", creds.custNr, "--login", creds.login, "--password", creds.password];
  const env = () => ({ FAXLINE_DATA_DIR: files.path, FAXLINE_LOG_LEVEL: "warn" });

  before(async () => {
    node = await startTestNode({ "testLine.timeScale": "0.1", "retry.busy": "1s,1s,1s" });
    await createTestLogin(node, creds);
    writeFileSync(hello, "Hello fax!\n");
  });
  after(async () => {
    await node.stop();
    files.remove();
  });

  it("delivers to +4900000020 and prints the final report (the README's first fax)", async () => {
    const r = await runFaxlineCli(["send", hello, "--to", "+4900000020", "--url", node.url, ...auth], env());
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /^Accepted: job FJ[A-Z0-9]{20} for \+4900000020\./m);
    assert.match(r.stdout, /job FJ[A-Z0-9]{20} is final, 1 page:/);
    assert.match(r.stdout, /\+4900000020: OK; sent \d{4}-\d\d-\d\dT.*s on the line/);
  });

  it("shows the retries of a busy number as they are scheduled, then OK", async () => {
    const r = await runFaxlineCli(["send", hello, "--to", "+4900000008", "--url", node.url, ...auth], env(), 60_000);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /\+4900000008: Retry scheduled at \d{4}-.* after: .*busy/i);
    assert.match(r.stdout, /\+4900000008: OK/);
  });

  it("says at once when a recipient is final while another goes on", async () => {
    const r = await runFaxlineCli(["send", hello, "--to", "+4900000009,+4900000008", "--url", node.url, ...auth], env(), 60_000);
    assert.equal(r.code, 1, r.stderr + r.stdout);
    const lines = r.stdout.split("\n");
    const wrongNumber = lines.findIndex((line) => /\+4900000009: WRONG_NUMBER .*, final$/.test(line));
    const retry = lines.findIndex((line) => /\+4900000008: Retry scheduled/i.test(line));
    const summary = lines.findIndex((line) => /is final, 1 page:/.test(line));
    assert.ok(wrongNumber >= 0, r.stdout);
    assert.ok(retry >= 0 && summary > retry && summary > wrongNumber, r.stdout);
  });

  it("exits 1 and names the status when a recipient fails, with the JSON report under --json", async () => {
    const r = await runFaxlineCli(["send", hello, "--to", "+4900000009", "--url", node.url, "--json", ...auth], env());
    assert.equal(r.code, 1, r.stderr + r.stdout);
    const report = JSON.parse(r.stdout);
    assert.equal(report.recipientStatus[0].status, "WRONG_NUMBER");
  });

  it("exits 2 with the node's message when the job is refused", async () => {
    const r = await runFaxlineCli(["send", hello, "--to", "12", "--url", node.url, ...auth], env());
    assert.equal(r.code, 2);
    assert.match(r.stderr, /the node refused the job \(400 number_invalid\): /);
  });

  it("returns at once with --detach, and says clearly when no node answers", async () => {
    const detached = await runFaxlineCli(["send", hello, "--to", "+4900000020", "--url", node.url, "--detach", ...auth], env());
    assert.equal(detached.code, 0);
    assert.match(detached.stdout, /^Accepted: job FJ[A-Z0-9]{20}\. Its report: http:\/\/127\.0\.0\.1:\d+\/rest\/v1\/99999TE\/fax\/reports\/FJ/);
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const none = await runFaxlineCli(["send", hello, "--to", "+4900000020", "--url", `http://127.0.0.1:${port}`, ...auth], env());
    assert.equal(none.code, 1);
    assert.ok(none.stderr.includes(`No Faxline node answers at http://127.0.0.1:${port} (ECONNREFUSED); start one with \`faxline serve\``), none.stderr);
  });

  it("turns file names into document names the contract accepts", () => {
    assert.equal(documentNameFor("/tmp/hello fax (1).txt"), "hello_fax_1_.txt");
    assert.equal(documentNameFor("Rechnung-2026_11.PDF"), "Rechnung-2026_11.PDF");
    assert.equal(documentNameFor(`${"x".repeat(40)}.docx`), `${"x".repeat(27)}.docx`);
    assert.match(documentNameFor("Grüße.txt"), /^[a-zA-Z0-9_.-]{1,32}$/);
  });
});
