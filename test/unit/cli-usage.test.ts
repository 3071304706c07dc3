/**
 * `faxline … --help` (src/cli/main.ts: usageFor): a command's own usage lines, with their
 * continuation lines; every command the CLI runs is in the usage, `inbound` too.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { usageFor } from "../../src/cli/main.ts";

describe("faxline --help", () => {
  const all = usageFor([]);

  it("lists every command, the inbound ones included", () => {
    for (const command of ["serve", "accounts create", "inbound topic create", "inbound number add", "inbound credential issue", "templates install", "blacklist add", "test-numbers", "send", "migrate", "nodes", "store copy", "datacenter adopt", "render", "fax send", "config numbers", "config number set", "config profile set", "config settings", "config audit"]) {
      assert.match(all, new RegExp(`^  faxline ${command}\\b`, "m"), command);
    }
  });

  it("gives a command's own lines, and a subcommand's, with their continuation lines", () => {
    const inbound = usageFor(["inbound"]).split("\n");
    assert.equal(inbound[0], "Usage:");
    assert.ok(inbound.slice(1).filter((line) => line.startsWith("  faxline")).every((line) => line.startsWith("  faxline inbound ")));
    assert.equal(inbound.filter((line) => line.startsWith("  faxline inbound ")).length, 9);
    assert.match(usageFor(["inbound"]), /^Configuration: /m);
    assert.deepEqual(usageFor(["inbound", "topic"]).split("\n").filter((line) => line.startsWith("  faxline")).length, 4);
    const render = usageFor(["render"]).split("\n");
    assert.equal(render.filter((line) => line.startsWith("  faxline")).length, 1);
    assert.ok(render.some((line) => line.includes("--tone-mode AUTO|TEXT|PHOTO|THRESHOLD")), "its continuation lines");
    // "fax" is fax send, not faxline's other commands.
    assert.ok(usageFor(["fax"]).split("\n").filter((line) => line.startsWith("  faxline")).every((line) => line.startsWith("  faxline fax send")));
  });

  it("falls back to the whole usage for a word that is no command", () => {
    assert.equal(usageFor(["nonsense"]), all);
  });
});
