/**
 * Picks the store's dialect from the configuration: store.url empty → the embedded SQLite file
 * `<store.dataDir>/faxline.sqlite`; postgres:// or postgresql:// → PostgreSQL. Each dialect is
 * loaded only when used, so a node on PostgreSQL never loads the SQLite binding and the
 * other way round.
 */
import { join, resolve } from "node:path";
import { ConfigError } from "../../config/config-error.ts";
import type { FaxlineConfig } from "../../config/schema.ts";
import type { Store } from "../store.ts";
import { isPostgresUrl } from "./postgres/postgres-url.ts";

export function sqliteStoreFile(config: FaxlineConfig): string {
  return join(resolve(config.store.dataDir), "faxline.sqlite");
}

/** Which store a configuration names, without secrets (for messages and `faxline nodes`). */
export function storeKind(config: FaxlineConfig): "sqlite" | "postgres" {
  return config.store.url.trim() === "" ? "sqlite" : "postgres";
}

export interface OpenStoreOptions {
  /** Run pending migrations (default true); `faxline migrate --check` opens without. */
  migrate?: boolean;
  /** Called after each query with its duration (the node's store query metric). */
  onQuery?: (durationMs: number) => void;
}

export async function openStore(config: FaxlineConfig, options: OpenStoreOptions = {}): Promise<Store> {
  const url = config.store.url.trim();
  let store: Store;
  if (url === "") {
    const { openSqliteStore } = await import("./sqlite/sqlite-store.ts");
    store = await openSqliteStore({ file: sqliteStoreFile(config), onQuery: options.onQuery });
  } else if (isPostgresUrl(url)) {
    const { openPostgresStore } = await import("./postgres/postgres-store.ts");
    store = await openPostgresStore({
      url,
      poolSize: config.store.poolSize,
      statementTimeoutMs: config.store.statementTimeout,
      connectTimeoutMs: config.store.connectTimeout,
      applicationName: `faxline ${config.node.datacenter}`,
      onQuery: options.onQuery,
    });
  } else {
    throw new ConfigError("Invalid configuration store.url (FAXLINE_STORE_URL): expected empty (the embedded SQLite store) or a postgres:// URL");
  }
  if (options.migrate ?? true) {
    try {
      await store.migrate();
    } catch (err) {
      await store.close().catch(() => {});
      throw err;
    }
  }
  return store;
}
