import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config/load.ts";
import { ConfigError } from "../../src/config/schema.ts";
import { tempDir } from "../support/test-node.ts";

describe("config: loading and validation", () => {
  it("uses the documented defaults", () => {
    const c = loadConfig({ env: {} });
    assert.equal(c.http.port, 8080);
    assert.equal(c.node.region, "DE");
    assert.equal(c.node.datacenter, "DE1");
    assert.deepEqual(c.node.roles, ["api", "scheduler", "sender", "notifier", "retention"]);
    assert.deepEqual(c.retry.busy.slice(0, 2), [180_000, 180_000]);
    assert.equal(c.retention.defaultDays, 30);
    assert.ok(Object.isFrozen(c) && Object.isFrozen(c.retry.busy));
  });

  it("lets the file override defaults and the environment override the file", () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, "faxline.yaml");
      writeFileSync(file, "http:\n  port: 9000\nnode:\n  region: US\n  datacenter: US2\nretry:\n  busy: [1m, 2m]\n");
      const fromFile = loadConfig({ file, env: {} });
      assert.equal(fromFile.http.port, 9000);
      assert.equal(fromFile.node.datacenter, "US2");
      assert.deepEqual(fromFile.retry.busy, [60_000, 120_000]);
      const withEnv = loadConfig({ file, env: { FAXLINE_PORT: "9100", FAXLINE_RETRY_BUSY: "30s" } });
      assert.equal(withEnv.http.port, 9100);
      assert.deepEqual(withEnv.retry.busy, [30_000]);
    } finally {
      dir.remove();
    }
  });

  it("accepts enum values in any letter case", () => {
    assert.equal(loadConfig({ env: { FAXLINE_REGION: "us", FAXLINE_DATACENTER: "us1" } }).node.datacenter, "US1");
  });

  it("refuses a data center outside the region, naming both", () => {
    assert.throws(
      () => loadConfig({ env: { FAXLINE_REGION: "US", FAXLINE_DATACENTER: "DE1" } }),
      (err: Error) => err instanceof ConfigError && /DE1/.test(err.message) && /FAXLINE_REGION=DE/.test(err.message),
    );
  });

  it("names the key, the source and the expectation for a bad value", () => {
    assert.throws(
      () => loadConfig({ env: { FAXLINE_PORT: "eighty" } }),
      (err: Error) => err instanceof ConfigError && err.message.includes("http.port") && err.message.includes("FAXLINE_PORT") && err.message.includes("whole number"),
    );
    assert.throws(() => loadConfig({ env: { FAXLINE_PORT: "70000" } }), /at most 65535/);
    assert.throws(() => loadConfig({ env: { FAXLINE_SCHEDULER_POLL_INTERVAL: "soon" } }), /duration/);
    assert.throws(() => loadConfig({ env: { FAXLINE_ROLES: "api,faxd" } }), /"faxd" is not one of/);
    assert.throws(() => loadConfig({ env: { FAXLINE_TEST_LINE_TIME_SCALE: "-1" } }), /timeScale/);
    // The live charts' samples: not faster than 10 a second, at most 10 000 kept.
    assert.throws(() => loadConfig({ env: { FAXLINE_CONSOLE_CHART_INTERVAL: "50ms" } }), /console\.chartInterval \(50 ms\).*at least 100 ms/);
    assert.throws(() => loadConfig({ env: { FAXLINE_CONSOLE_CHART_INTERVAL: "100ms", FAXLINE_CONSOLE_CHART_WINDOW: "1h" } }), /at most 10 000 of them/);
    assert.equal(loadConfig({ env: { FAXLINE_CONSOLE_CHART_INTERVAL: "1s", FAXLINE_CONSOLE_CHART_WINDOW: "2h" } }).console.chartWindow, 7_200_000);
    assert.equal(loadConfig({ env: {} }).cluster.forgetNodesAfter, 7 * 86_400_000);
    assert.throws(() => loadConfig({ env: { FAXLINE_CLUSTER_FORGET_NODES_AFTER: "30m" } }), /cluster\.forgetNodesAfter \(1800000 ms\).*at least 1h and at least cluster\.failoverAfter/);
    assert.throws(() => loadConfig({ env: { FAXLINE_CLUSTER_FORGET_NODES_AFTER: "2h", FAXLINE_CLUSTER_FAILOVER_AFTER: "3h" } }), /cluster\.forgetNodesAfter/);
    assert.equal(loadConfig({ env: { FAXLINE_CLUSTER_FORGET_NODES_AFTER: "3h", FAXLINE_CLUSTER_FAILOVER_AFTER: "3h" } }).cluster.forgetNodesAfter, 10_800_000);
  });

  it("refuses unknown keys and unreadable files", () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, "c.yaml");
      writeFileSync(file, "http:\n  prot: 1\n");
      assert.throws(() => loadConfig({ file, env: {} }), /unknown keys: http\.prot/);
      writeFileSync(file, "http: [\n");
      assert.throws(() => loadConfig({ file, env: {} }), /not valid YAML/);
      assert.throws(() => loadConfig({ file: join(dir.path, "missing.yaml"), env: {} }), /Cannot read config file/);
    } finally {
      dir.remove();
    }
  });
});
