/**
 * `faxline config …` (src/cli/config-commands.ts): the configuration API from the command line,
 * through a running node with the typed client, as a manager and as an operator: the same
 * checks, tenancy and audit log as any client of /config/v2.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { runFaxlineCli } from "../support/child-node.ts";
import { createTestLogin, startTestNode, tempDir, type TestNode } from "../support/test-node.ts";

describe("faxline config: the configuration API from the command line", () => {
  let node: TestNode;
  const files = tempDir("faxline-config-cli-");
  const manager = { custNr: "94001", login: "cli-admin", password: "cli-admin-pw" };
  const operator = { custNr: "94000", login: "cli-ops", password: "cli-ops-pw" };
  const env = () => ({ FAXLINE_DATA_DIR: files.path, FAXLINE_LOG_LEVEL: "warn" });
  const as = (who: { login: string; password: string }, custNr = manager.custNr) => ["--url", node.url, "--customer", custNr, "--login", who.login, "--password", who.password];

  before(async () => {
    node = await startTestNode();
    await createTestLogin(node, { ...manager, isManager: true });
    await createTestLogin(node, { ...operator, isAdmin: true });
  });
  after(async () => {
    await node.stop();
    files.remove();
  });

  it("an operator gives the customer a number; the manager makes a profile, assigns the number and reads the effective settings and the log", async () => {
    const given = await runFaxlineCli(["config", "number", "set", "+4940555060", "--comments", "Hamburg", ...as(operator)], env());
    assert.equal(given.code, 0, given.stderr + given.stdout);
    assert.match(given.stdout, /^\+4940555060 +- +active=- /m);

    const created = await runFaxlineCli(["config", "profile", "set", "orders", "--fax-id", "+49 40 555060", "--mail-to", "orders@example.com,archive@example.com", "--attach", "TIFF", ...as(manager)], env());
    assert.equal(created.code, 0, created.stderr + created.stdout);
    assert.match(created.stdout, /^created profile orders$/m);
    assert.match(created.stdout, /email: orders@example.com, archive@example.com \(TIFF\)/);
    const changed = await runFaxlineCli(["config", "profile", "set", "orders", "--cost-center", "Sales", ...as(manager)], env());
    assert.match(changed.stdout, /^changed profile orders$/m);
    assert.match(changed.stdout, /email: orders@example.com/, "a change names only what it changes");

    const assigned = await runFaxlineCli(["config", "number", "set", "+49 40 555060", "--profile", "orders", ...as(manager)], env());
    assert.equal(assigned.code, 0, assigned.stderr + assigned.stdout);
    const listed = await runFaxlineCli(["config", "numbers", "--inherit", "--json", ...as(manager)], env());
    assert.equal(listed.code, 0, listed.stderr);
    const [number] = JSON.parse(listed.stdout);
    assert.equal(number.number, "+4940555060");
    assert.equal(number.faxId, "+49 40 555060");
    assert.equal(number.costCenter, "Sales");
    assert.equal(number.active, true);
    assert.equal(number.paused, false);
    assert.equal(number.comments, "Hamburg");

    // Paused and the profile's quota (Faxline's settings): set, shown, and "" unsets them.
    const paused = await runFaxlineCli(["config", "profile", "set", "orders", "--paused", "true", "--max-waiting-faxes", "50", ...as(manager)], env());
    assert.equal(paused.code, 0, paused.stderr + paused.stdout);
    assert.match(paused.stdout, /^orders: active=- paused=true maxWaitingFaxes=50 /m);
    const inherited = JSON.parse((await runFaxlineCli(["config", "number", "show", "+4940555060", "--inherit", "--json", ...as(manager)], env())).stdout);
    assert.equal(inherited.paused, true, "the profile's pause holds for its number");
    const unpaused = await runFaxlineCli(["config", "profile", "set", "orders", "--paused", "", "--max-waiting-faxes", "", ...as(manager)], env());
    assert.match(unpaused.stdout, /^orders: active=- paused=- maxWaitingFaxes=- /m);

    const log = await runFaxlineCli(["config", "audit", "--json", ...as(manager)], env());
    const entries = JSON.parse(log.stdout).entries as any[];
    assert.deepEqual(entries.map((e) => [e.login, e.resource, e.action]), [
      ["cli-admin", "inbound/profiles", "update"],
      ["cli-admin", "inbound/profiles", "update"],
      ["cli-admin", "inbound/numbers", "update"],
      ["cli-admin", "inbound/profiles", "update"],
      ["cli-admin", "inbound/profiles", "create"],
      ["cli-ops", "inbound/numbers", "create"],
    ]);
  });

  it("says what the node refused, with exit code 2, and 1 when there is no node", async () => {
    const bad = await runFaxlineCli(["config", "number", "set", "+4940555060", "--fax-id", "Bäckerei", ...as(manager)], env());
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /refused it \(400 setting_invalid\): .*printable ASCII/);
    const notOperator = await runFaxlineCli(["config", "number", "remove", "+4940555060", ...as(manager)], env());
    assert.equal(notOperator.code, 2);
    assert.match(notOperator.stderr, /403 config_operator_only/);
    const other = await runFaxlineCli(["config", "numbers", ...as(manager, "94000")], env());
    assert.match(other.stderr, /401 customer_mismatch/);
    const usage = await runFaxlineCli(["config", "number", "set", "+4940555060", ...as(manager)], env());
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /changes nothing/);
    const down = await runFaxlineCli(["config", "numbers", "--url", "http://127.0.0.1:9", "--customer", manager.custNr, "--login", manager.login, "--password", manager.password], env());
    assert.equal(down.code, 1);
  });
});
