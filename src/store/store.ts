/**
 * The store: a Kysely instance over one dialect, plus the few queries whose SQL differs by
 * dialect (the atomic claims). Everything outside `store/dialects/` is dialect-agnostic and
 * talks to `Store`.
 */
import type { Kysely, Migration } from "kysely";
import type { Database, JobRow, NotificationRow, RecipientRow } from "./database.ts";
import * as m0001 from "./migrations/0001-create-core-tables.ts";
import * as m0002 from "./migrations/0002-create-notification-tables.ts";
import * as m0003 from "./migrations/0003-create-fax-image-variants.ts";
import * as m0004 from "./migrations/0004-create-destination-capabilities.ts";

export type DialectName = "sqlite";

/** Column types that differ between dialects, handed to migrations. */
export interface ColumnTypes {
  timestamp: "bigint";
  blob: "blob" | "bytea";
}

export interface ClaimJobArgs {
  datacenter: string;
  node: string;
  now: number;
  leaseUntil: number;
}

export interface ClaimRecipientArgs extends ClaimJobArgs {
  callsPerNumber: number;
}

/** Atomic claims: at most one claimer wins a row; the others see nothing. */
export interface ClaimQueries {
  /**
   * Moves the oldest `pending` job of the data center (express first) to `rendering`. Jobs are
   * rendered at once, even when jobValid.start lies ahead, so document errors show early.
   */
  claimJobToRender(db: Kysely<Database>, args: ClaimJobArgs): Promise<JobRow | undefined>;
  /**
   * Moves the most urgent due `ready` recipient of the data center to `sending`, skipping
   * destinations that already have `callsPerNumber` calls running and jobs past validity.
   */
  claimDueRecipient(db: Kysely<Database>, args: ClaimRecipientArgs): Promise<RecipientRow | undefined>;
  /**
   * Moves the notification of the data center that has been due longest to `delivering`,
   * skipping receivers this node is already sending to as much as it may.
   */
  claimDueNotification(db: Kysely<Database>, args: ClaimNotificationArgs): Promise<NotificationRow | undefined>;
}

export interface ClaimNotificationArgs extends ClaimJobArgs {
  busyReceivers: readonly string[];
}

export interface Store {
  readonly dialect: DialectName;
  readonly db: Kysely<Database>;
  readonly claims: ClaimQueries;
  migrate(): Promise<void>;
  close(): Promise<void>;
}

/** All migrations in order. Append only; never edit a released one. */
export function migrations(types: ColumnTypes): Record<string, Migration> {
  return {
    "0001-create-core-tables": { up: (db) => m0001.up(db, types) },
    "0002-create-notification-tables": { up: (db) => m0002.up(db, types) },
    "0003-create-fax-image-variants": { up: (db) => m0003.up(db, types) },
    "0004-create-destination-capabilities": { up: (db) => m0004.up(db, types) },
  };
}
