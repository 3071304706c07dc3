/**
 * The store: a Kysely instance over one dialect, plus the few things whose SQL or behaviour
 * differs by dialect: the atomic claims, the classification of driver errors, the cross-node
 * wake-up signals and the column types of migrations. Everything outside `store/dialects/` is
 * dialect-agnostic and talks to `Store` (Kysely's own rule: "everything outside of dialect
 * implementations is dialect-agnostic").
 *
 * Two dialects exist (docs/adr/0007-postgresql-store.md):
 *  - sqlite: the embedded default, one file under store.dataDir (dialects/sqlite/);
 *  - postgres: a shared PostgreSQL database for many nodes (dialects/postgres/), chosen by
 *    store.url = postgres://…
 */
import type { Kysely } from "kysely";
import type { Database, JobRow, NewJobDocumentRow, NewJobRow, NewRecipientRow, NotificationRow, ReceivedFaxRow, RecipientRow } from "./database.ts";

export type DialectName = "sqlite" | "postgres";
export type { MigrationDialect } from "./migrations/migration-dialect.ts";

export interface ClaimJobArgs {
  datacenter: string;
  node: string;
  now: number;
  leaseUntil: number;
}

export interface ClaimRecipientArgs extends ClaimJobArgs {
  callsPerNumber: number;
}

export interface ClaimNotificationArgs extends ClaimJobArgs {
  busyReceivers: readonly string[];
}

export interface ClaimReceivedFaxesArgs {
  custNr: string;
  topic: string;
  now: number;
  /** Until when the faxes handed out are hidden from other pollers. */
  lockUntil: number;
  limit: number;
}

/** Atomic claims: at most one claimer wins a row; the others see nothing or another row. */
export interface ClaimQueries {
  /**
   * Moves the oldest `pending` job of the data center (express first) to `rendering`. Jobs are
   * rendered at once, even when jobValid.start lies ahead, so document errors show early.
   */
  claimJobToRender(db: Kysely<Database>, args: ClaimJobArgs): Promise<JobRow | undefined>;
  /**
   * Moves the most urgent due `ready` recipient of the data center to `sending`, skipping
   * destinations that already have `callsPerNumber` calls running (on any node of the store)
   * and jobs past validity. Must run inside a transaction (the caller inserts the attempt in
   * the same one); the per-destination count holds until that transaction commits.
   */
  claimDueRecipient(trx: Kysely<Database>, args: ClaimRecipientArgs): Promise<RecipientRow | undefined>;
  /**
   * Moves the notification of the data center that has been due longest to `delivering`,
   * skipping receivers this node is already sending to as much as it may.
   */
  claimDueNotification(db: Kysely<Database>, args: ClaimNotificationArgs): Promise<NotificationRow | undefined>;
  /**
   * Hands out up to `limit` received faxes of the topic that are neither acknowledged nor locked,
   * oldest first, locking them until `lockUntil`: a fax handed to one poller is not handed to
   * another before then.
   */
  claimReceivedFaxes(db: Kysely<Database>, args: ClaimReceivedFaxesArgs): Promise<ReceivedFaxRow[]>;
}

/** A job with its documents and recipients, as stored at intake. */
export interface JobRows {
  job: NewJobRow;
  documents: NewJobDocumentRow[];
  recipients: NewRecipientRow[];
}

/** Writes whose fastest form differs by dialect. */
export interface DialectWrites {
  /**
   * Stores a job with its documents and recipients, all or nothing. (SQLite: one transaction
   * of a few statements; PostgreSQL: one statement, so that a job costs one round trip.)
   */
  insertJobRows(db: Kysely<Database>, rows: JobRows): Promise<void>;
}

/** How driver errors are read: the only place that knows SQLite's and PostgreSQL's codes. */
export interface StoreFaults {
  /**
   * The store cannot serve right now, but may shortly: no connection, the primary is gone or
   * read-only, the database is shutting down, busy or timed out. The API answers 503 with
   * Retry-After; roles retry later. Anything else is a bug (an internal error).
   */
  isUnavailable(err: unknown): boolean;
  /** A unique or primary key constraint refused the write (a concurrent insert won). */
  isUniqueViolation(err: unknown): boolean;
}

/** The kinds of work a write can make available to idle nodes. */
export type WorkKind = "render" | "send" | "notify";

export interface WorkSignals {
  /**
   * Calls `onWork` whenever work of a kind became available in a data center, on any node of
   * the store (PostgreSQL LISTEN; SQLite: never, its nodes poll). A hint only: polling stays
   * the source of truth, so a lost signal costs at most one poll interval.
   */
  listen(onWork: (kind: WorkKind, datacenter: string) => void): Promise<{ close(): Promise<void> }>;
}

export interface MigrationStatus {
  name: string;
  executedAt: Date | null;
}

export interface Store {
  readonly dialect: DialectName;
  /** Where the store lives, without secrets: a file path or postgres://user@host,host/db. */
  readonly location: string;
  readonly db: Kysely<Database>;
  readonly claims: ClaimQueries;
  readonly writes: DialectWrites;
  readonly faults: StoreFaults;
  readonly signals: WorkSignals;
  /** Runs pending migrations; safe when many nodes start at once (they migrate once). */
  migrate(): Promise<void>;
  /** Every known migration with when it ran (null: pending). */
  migrations(): Promise<MigrationStatus[]>;
  close(): Promise<void>;
}
