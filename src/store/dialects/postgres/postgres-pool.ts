/**
 * node-postgres (pg) connections that follow the primary of a replicated cluster.
 *
 * pg connects to one host; store.url may name several (the primary and its standbys). The
 * HostSelector remembers which host last gave an acceptable connection, and every new
 * physical connection is opened there. A new connection is checked once against
 * target_session_attrs (`select pg_is_in_recovery(), current_setting('transaction_read_only')`:
 * libpq's own test); a connection refused at the socket, or to a server of the wrong kind (a
 * standby, for read-write), moves the selector on to the next host and is tried there, so one
 * `connect()` tries every host before it fails. Connections to a server that died are dropped
 * by pg's pool when they fail; the next ones go to the new primary. So after a failover a node
 * follows the promoted standby by itself, within one connect timeout per dead host.
 *
 * The pool implements Kysely's PostgresPool (connect/release/end).
 */
import { readFileSync } from "node:fs";
import type { ConnectionOptions } from "node:tls";
import pg from "pg";
import type { PostgresPool, PostgresPoolClient } from "kysely";
import { isConnectionLost } from "./postgres-faults.ts";
import type { PostgresHost, PostgresTarget } from "./postgres-url.ts";

export interface PostgresConnectionSettings {
  target: PostgresTarget;
  poolSize: number;
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  applicationName: string;
  /** Called when a connection to the pool's idle clients fails (pg's pool 'error' event). */
  onIdleError?: (err: Error) => void;
}

/** int8 (bigint, count(*)) as a JavaScript number: every millisecond timestamp fits. */
const INT8_OID = 20;
export const FAXLINE_PG_TYPES = {
  getTypeParser(oid: number, format?: string) {
    if (oid === INT8_OID && format !== "binary") return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as "text");
  },
};

/** Errors of the socket or the server's start-up: another host may do better. */
export const isConnectFailure = isConnectionLost;

/**
 * PostgreSQL's text cannot hold U+0000 (SQLite's can). A NUL that reaches a text parameter
 * anyway (a receiver's answer quoted in a delivery log, a far end's reason phrase) becomes
 * U+FFFD instead of failing the write; the API refuses NUL in requests before they get here.
 */
function withoutNul(value: unknown): unknown {
  return typeof value === "string" && value.includes("\u0000") ? value.replaceAll("\u0000", "\uFFFD") : value;
}

export class WrongServerError extends Error {
  readonly code = "08000";
  constructor(host: PostgresHost, why: string) {
    super(`${host.host}:${host.port} ${why}`);
    this.name = "WrongServerError";
  }
}

export class HostSelector {
  readonly hosts: readonly PostgresHost[];
  #index = 0;

  constructor(hosts: readonly PostgresHost[]) {
    this.hosts = hosts;
  }

  get current(): PostgresHost {
    return this.hosts[this.#index]!;
  }

  /** Moves on from `host` (unless another caller already did). */
  failed(host: PostgresHost): void {
    if (this.current === host) this.#index = (this.#index + 1) % this.hosts.length;
  }
}

const caFiles = new Map<string, string>();

/** The CA file of sslrootcert, read once (at open, where a bad path stops the node). */
export function readCaFile(path: string): string {
  let ca = caFiles.get(path);
  if (ca === undefined) {
    ca = readFileSync(path, "utf8");
    caFiles.set(path, ca);
  }
  return ca;
}

function sslOptions(target: PostgresTarget): boolean | ConnectionOptions {
  switch (target.sslmode) {
    case "disable":
    case "prefer":
      return false;
    case "require":
      return { rejectUnauthorized: false };
    case "verify-ca":
    case "verify-full": {
      const options: ConnectionOptions = { rejectUnauthorized: true };
      if (target.sslrootcert) options.ca = readCaFile(target.sslrootcert);
      if (target.sslmode === "verify-ca") options.checkServerIdentity = () => undefined;
      return options;
    }
  }
}

/** pg.Client options for one host of the target. */
export function clientConfig(settings: PostgresConnectionSettings, host: PostgresHost): pg.ClientConfig {
  const { target } = settings;
  return {
    host: host.host,
    port: host.port,
    user: target.user,
    password: target.password,
    database: target.database,
    ssl: sslOptions(target),
    application_name: target.applicationName ?? settings.applicationName,
    connectionTimeoutMillis: (target.connectTimeoutSeconds ?? Math.ceil(settings.connectTimeoutMs / 1000)) * 1000,
    statement_timeout: settings.statementTimeoutMs,
    // The client's own limit, for a server that does not answer at all (a network that drops
    // everything): a little longer than the server's statement_timeout.
    query_timeout: settings.statementTimeoutMs + 5_000,
    idle_in_transaction_session_timeout: 60_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    types: FAXLINE_PG_TYPES,
  };
}

/** Checks a fresh connection against target_session_attrs (libpq's test). */
export async function checkServerKind(client: pg.Client | pg.PoolClient, target: PostgresTarget, host: PostgresHost): Promise<void> {
  if (target.targetSessionAttrs === "any") return;
  const result = await client.query<{ recovery: boolean; read_only: string }>(
    "select pg_is_in_recovery() as recovery, current_setting('transaction_read_only') as read_only",
  );
  const row = result.rows[0];
  if (row?.recovery) throw new WrongServerError(host, "is a standby (in recovery), not the primary");
  if (target.targetSessionAttrs === "read-write" && row?.read_only === "on") throw new WrongServerError(host, "does not accept writes (transaction_read_only is on)");
}

export class FailoverPool implements PostgresPool {
  readonly selector: HostSelector;
  readonly #settings: PostgresConnectionSettings;
  readonly #pool: pg.Pool;
  readonly #checked = new WeakSet<object>();
  /** Host of each physical connection (to move the selector when it proves wrong). */
  readonly #hostOf = new WeakMap<object, PostgresHost>();

  constructor(settings: PostgresConnectionSettings) {
    this.#settings = settings;
    const selector = new HostSelector(settings.target.hosts);
    this.selector = selector;
    const hostOf = this.#hostOf;
    // Each new physical connection is made to the selector's current host.
    class SelectedHostClient extends pg.Client {
      constructor() {
        const host = selector.current;
        super(clientConfig(settings, host));
        hostOf.set(this, host);
        // A connection that drops while checked out but between queries (inside a transaction,
        // say) emits 'error' with nobody listening, which would end the process. Its next query
        // fails instead, and #watch has the client destroyed on release; idle clients are
        // removed by the pool's own listener.
        this.on("error", () => {});
      }
    }
    this.#pool = new pg.Pool({
      Client: SelectedHostClient as unknown as typeof pg.Client,
      max: settings.poolSize,
      idleTimeoutMillis: 60_000,
      connectionTimeoutMillis: settings.connectTimeoutMs,
    });
    // An idle connection that fails (the server went away) is dropped by the pool; without a
    // listener, the 'error' event would end the process.
    this.#pool.on("error", (err) => settings.onIdleError?.(err));
  }

  async connect(): Promise<PostgresPoolClient> {
    let lastError: unknown;
    for (let tries = 0; tries < this.selector.hosts.length; tries++) {
      const host = this.selector.current;
      let client: pg.PoolClient;
      try {
        client = await this.#pool.connect();
      } catch (err) {
        lastError = err;
        if (!isConnectFailure(err)) throw err;
        this.selector.failed(host);
        continue;
      }
      if (this.#checked.has(client)) return this.#watch(client);
      try {
        await checkServerKind(client, this.#settings.target, this.#hostOf.get(client) ?? host);
        this.#checked.add(client);
        return this.#watch(client);
      } catch (err) {
        client.release(true);
        lastError = err;
        if (!(err instanceof WrongServerError) && !isConnectFailure(err)) throw err;
        this.selector.failed(this.#hostOf.get(client) ?? host);
      }
    }
    throw lastError;
  }

  /**
   * Hands a connection out; if a query on it finds the server read-only (25006: the primary
   * was demoted under it) or the connection broken, the connection is destroyed on release
   * instead of going back to the pool, and the selector moves on from its host.
   */
  #watch(client: pg.PoolClient): PostgresPoolClient {
    let broken = false;
    const host = this.#hostOf.get(client);
    const selector = this.selector;
    const query = ((...args: unknown[]) => {
      if (typeof args[0] === "string" && Array.isArray(args[1])) args[1] = args[1].map(withoutNul);
      const result = (client.query as (...a: unknown[]) => unknown)(...args);
      if (result instanceof Promise) {
        return result.catch((err: unknown) => {
          const code = (err as { code?: unknown }).code;
          if (code === "25006" || isConnectFailure(err)) {
            broken = true;
            if (host) selector.failed(host);
          }
          throw err;
        });
      }
      return result;
    }) as PostgresPoolClient["query"];
    return {
      query,
      release: () => client.release(broken ? true : undefined),
    };
  }

  async end(): Promise<void> {
    await this.#pool.end();
  }
}
