/**
 * The PostgreSQL dialect's pure parts: reading store.url as libpq reads a URI, hiding its
 * password, reading driver errors, choosing hosts, and reading work signals.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parsePostgresUrl, PostgresUrlError, redactStoreUrl } from "../../src/store/dialects/postgres/postgres-url.ts";
import { isConnectionLost, postgresFaults } from "../../src/store/dialects/postgres/postgres-faults.ts";
import { HostSelector, WrongServerError } from "../../src/store/dialects/postgres/postgres-pool.ts";
import { parseWorkSignal } from "../../src/store/dialects/postgres/postgres-work-signals.ts";
import { sqliteFaults } from "../../src/store/dialects/sqlite/sqlite-faults.ts";

describe("store.url for PostgreSQL", () => {
  it("reads hosts, ports, user, password, database and parameters", () => {
    const t = parsePostgresUrl("postgresql://fax%40line:p%3Ass@db1:5433,db2,[::1]:6000/fax_db?target_session_attrs=primary&sslmode=require&application_name=de1&connect_timeout=4");
    assert.deepEqual(t.hosts, [
      { host: "db1", port: 5433 },
      { host: "db2", port: 5432 },
      { host: "::1", port: 6000 },
    ]);
    assert.equal(t.user, "fax@line");
    assert.equal(t.password, "p:ss");
    assert.equal(t.database, "fax_db");
    assert.equal(t.targetSessionAttrs, "primary");
    assert.equal(t.sslmode, "require");
    assert.equal(t.applicationName, "de1");
    assert.equal(t.connectTimeoutSeconds, 4);
  });

  it("asks for a writable server by default when there are several hosts, for any when one", () => {
    assert.equal(parsePostgresUrl("postgres://a,b/x").targetSessionAttrs, "read-write");
    assert.equal(parsePostgresUrl("postgres://a/x").targetSessionAttrs, "any");
    assert.equal(parsePostgresUrl("postgres://a/x").sslmode, "prefer");
  });

  it("says what is wrong with a bad URL", () => {
    const bad = (url: string, pattern: RegExp) => assert.throws(() => parsePostgresUrl(url), (e: unknown) => e instanceof PostgresUrlError && pattern.test(e.message));
    bad("mysql://a/x", /must start with postgres:\/\//);
    bad("postgres:///x", /names no host/);
    bad("postgres://a:0/x", /out of range/);
    bad("postgres://a:70000/x", /out of range/);
    bad("postgres://a:b:c/x", /not HOST or HOST:PORT/);
    bad("postgres://a/x?target_session_attrs=standby", /not one of read-write, primary, any/);
    bad("postgres://a/x?sslmode=maybe", /sslmode=maybe/);
    bad("postgres://a/x?connect_timeout=soon", /whole number of seconds/);
    bad("postgres://a/x?statement_timeout=5", /"statement_timeout" is not one Faxline reads/);
  });

  it("hides the password, and only the password", () => {
    assert.equal(redactStoreUrl("postgres://fax:s3cret@db1,db2/faxline?sslmode=require"), "postgres://fax:***@db1,db2/faxline?sslmode=require");
    assert.equal(redactStoreUrl("postgresql://fax@db/faxline"), "postgresql://fax@db/faxline");
    assert.equal(redactStoreUrl("postgres://db/faxline"), "postgres://db/faxline");
  });
});

describe("driver errors", () => {
  const pgError = (code: string, message = "x") => Object.assign(new Error(message), { code });

  it("counts lost connections, failovers, timeouts and a full pool as unavailable", () => {
    for (const e of [
      pgError("ECONNREFUSED"),
      pgError("57P01", "terminating connection due to administrator command"),
      pgError("25006", "cannot execute INSERT in a read-only transaction"),
      pgError("57014", "canceling statement due to statement timeout"),
      pgError("40P01", "deadlock detected"),
      pgError("08006"),
      new Error("Connection terminated unexpectedly"),
      new Error("Query read timeout"),
      new Error("timeout exceeded when trying to connect"),
      new WrongServerError({ host: "db2", port: 5432 }, "is a standby"),
      new AggregateError([pgError("ECONNREFUSED")], "all hosts failed"),
    ]) {
      assert.equal(postgresFaults.isUnavailable(e), true, String(e.message));
    }
  });

  it("does not move the host selector for a full pool, and calls other errors bugs", () => {
    assert.equal(isConnectionLost(new Error("timeout exceeded when trying to connect")), false);
    assert.equal(isConnectionLost(pgError("ECONNRESET")), true);
    for (const e of [pgError("42703", "column does not exist"), pgError("23505"), new TypeError("x is undefined")]) {
      assert.equal(postgresFaults.isUnavailable(e), false, e.message);
    }
    assert.equal(postgresFaults.isUniqueViolation(pgError("23505")), true);
    assert.equal(postgresFaults.isUniqueViolation(pgError("23503")), false);
  });

  it("reads SQLite's busy, disk and constraint codes", () => {
    assert.equal(sqliteFaults.isUnavailable(pgError("SQLITE_BUSY")), true);
    assert.equal(sqliteFaults.isUnavailable(pgError("SQLITE_FULL")), true);
    assert.equal(sqliteFaults.isUnavailable(pgError("SQLITE_CONSTRAINT_UNIQUE")), false);
    assert.equal(sqliteFaults.isUniqueViolation(pgError("SQLITE_CONSTRAINT_PRIMARYKEY")), true);
  });
});

describe("the host selector", () => {
  it("stays on a good host and moves on, round, from one that failed", () => {
    const a = { host: "a", port: 1 };
    const b = { host: "b", port: 2 };
    const selector = new HostSelector([a, b]);
    assert.equal(selector.current, a);
    selector.failed(b); // not the current one: another caller already moved on
    assert.equal(selector.current, a);
    selector.failed(a);
    assert.equal(selector.current, b);
    selector.failed(a); // a second report of the same failure changes nothing
    assert.equal(selector.current, b);
    selector.failed(b);
    assert.equal(selector.current, a);
  });
});

describe("work signals", () => {
  it("reads kind and data center, and ignores anything else", () => {
    assert.deepEqual(parseWorkSignal("send:DE2"), { kind: "send", datacenter: "DE2" });
    assert.deepEqual(parseWorkSignal("render:US1"), { kind: "render", datacenter: "US1" });
    assert.equal(parseWorkSignal("delete:DE1"), null);
    assert.equal(parseWorkSignal("notify"), null);
    assert.equal(parseWorkSignal(""), null);
  });
});
