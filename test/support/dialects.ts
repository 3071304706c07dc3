/**
 * The store dialects every store and engine test runs against, Kysely's way: one test body,
 * looped over `DIALECTS` (`describe(\`${dialect}: …\`)`). FAXLINE_TEST_DIALECTS=sqlite or
 * =postgres narrows the set (e.g. for a quick run).
 *
 * `testStore(dialect)` gives what a suite needs to point nodes at a fresh, empty store of that
 * dialect: config overrides for in-process nodes, environment variables for child nodes, and a
 * cleanup. SQLite stores live in the suite's data directory, as before; PostgreSQL stores are a
 * new database on the test server (support/postgres-cluster.ts).
 */
import { after, before, beforeEach } from "node:test";
import { openStore } from "../../src/store/dialects/open-store.ts";
import type { Store } from "../../src/store/store.ts";
import { createTestDatabase } from "./postgres-cluster.ts";
import { tempDir, testConfig } from "./test-node.ts";

export type TestDialect = "sqlite" | "postgres";

export const DIALECTS: readonly TestDialect[] = (() => {
  const wanted = (process.env.FAXLINE_TEST_DIALECTS ?? "sqlite,postgres")
    .split(",")
    .map((d) => d.trim())
    .filter((d): d is TestDialect => d === "sqlite" || d === "postgres");
  return wanted.length > 0 ? wanted : ["sqlite", "postgres"];
})();

export interface TestStore {
  dialect: TestDialect;
  /** store.url: "" for SQLite. */
  url: string;
  /** Config overrides for startTestNode / testConfig. */
  overrides: Record<string, unknown>;
  /** FAXLINE_* variables for child nodes and CLI runs. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

const created = new Set<TestStore>();

export async function testStore(dialect: TestDialect): Promise<TestStore> {
  if (dialect === "sqlite") return { dialect, url: "", overrides: {}, env: {}, drop: async () => {} };
  const database = await createTestDatabase();
  const store: TestStore = {
    dialect,
    url: database.url,
    overrides: { "store.url": database.url },
    env: { FAXLINE_STORE_URL: database.url },
    async drop() {
      created.delete(store);
      await database.drop();
    },
  };
  created.add(store);
  return store;
}

// Databases a suite did not drop itself go when the test file's process is done.
process.once("beforeExit", () => {
  void Promise.allSettled([...created].map((s) => s.drop()));
});

/**
 * For a `describe` looped over DIALECTS: makes a fresh store of the dialect before the suite's
 * own `before` hooks (call it first in the describe body) and hands out its overrides and
 * environment. The database is dropped when the test file's process ends, after the suite's
 * nodes have stopped.
 */
export function withDialect(
  dialect: TestDialect,
  options: { fresh?: "suite" | "test" } = {},
): { overrides(): Record<string, unknown>; env(): Record<string, string>; store(): TestStore } {
  let current: TestStore | undefined;
  // "test": a new store for every test, for suites whose tests each start nodes of their own
  // on new data directories (as new SQLite files are, for the SQLite run).
  (options.fresh === "test" ? beforeEach : before)(async () => {
    current = await testStore(dialect);
  });
  const get = (): TestStore => {
    if (current === undefined) throw new Error("withDialect(): the store is made in a before hook; call it first in the describe body");
    return current;
  };
  return { overrides: () => get().overrides, env: () => get().env, store: get };
}

/** Opens (and migrates) the store a TestStore names, with `dataDir` for SQLite's file. */
export async function openTestStore(ts: TestStore, dataDir: string): Promise<Store> {
  return openStore(testConfig(dataDir, ts.overrides));
}

/**
 * For the describe() it is called in: a fresh database of `dialect` made before its tests, a store
 * open on it (`store`), and both closed and dropped after them.
 */
export function suiteStore(dialect: TestDialect): { readonly store: Store } {
  const dir = tempDir();
  let ts: TestStore | undefined;
  let store: Store | undefined;
  before(async () => {
    ts = await testStore(dialect);
    store = await openTestStore(ts, dir.path);
  });
  after(async () => {
    await store?.close();
    await ts?.drop();
    dir.remove();
  });
  return {
    get store(): Store {
      if (store === undefined) throw new Error("suiteStore: the suite's store is opened in its before hook");
      return store;
    },
  };
}
