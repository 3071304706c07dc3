/**
 * Every migration of the store, in order, for Kysely's Migrator (run-migrations.ts). Append
 * only; never edit a released migration: a change is a new file.
 */
import type { Migration } from "kysely";
import type { MigrationDialect } from "./migration-dialect.ts";
import * as m0001 from "./0001-create-core-tables.ts";
import * as m0002 from "./0002-create-notification-tables.ts";
import * as m0003 from "./0003-create-fax-image-variants.ts";
import * as m0004 from "./0004-create-destination-capabilities.ts";
import * as m0005 from "./0005-create-cluster-tables.ts";
import * as m0006 from "./0006-create-adoption-tables.ts";
import * as m0007 from "./0007-create-console-tables.ts";
import * as m0008 from "./0008-create-inbound-tables.ts";
import * as m0009 from "./0009-add-job-tone-mode.ts";
import * as m0010 from "./0010-add-customer-tone-mode.ts";
import * as m0011 from "./0011-add-job-cancelled-by.ts";
import * as m0020 from "./0020-create-inbound-sftp-deliveries.ts";
import * as m0025 from "./0025-create-report-rollups.ts";
import * as m0030 from "./0030-create-configuration-tables.ts";
import * as m0035 from "./0035-create-mail-to-fax-tables.ts";
import * as m0042 from "./0042-add-received-page-quality.ts";
import * as m0043 from "./0043-create-failing-numbers.ts";
import * as m0044 from "./0044-add-inbound-pause-and-quota.ts";
import * as m0045 from "./0045-add-job-suppress-blank-pages.ts";
import * as m0046 from "./0046-create-m2f-pin-failures.ts";

/** All migrations in order. */
export function migrations(dialect: MigrationDialect): Record<string, Migration> {
  return {
    "0001-create-core-tables": { up: (db) => m0001.up(db, dialect) },
    "0002-create-notification-tables": { up: (db) => m0002.up(db, dialect) },
    "0003-create-fax-image-variants": { up: (db) => m0003.up(db, dialect) },
    "0004-create-destination-capabilities": { up: (db) => m0004.up(db, dialect) },
    "0005-create-cluster-tables": { up: (db) => m0005.up(db, dialect) },
    "0006-create-adoption-tables": { up: (db) => m0006.up(db, dialect) },
    "0007-create-console-tables": { up: (db) => m0007.up(db, dialect) },
    "0008-create-inbound-tables": { up: (db) => m0008.up(db, dialect) },
    "0009-add-job-tone-mode": { up: (db) => m0009.up(db, dialect) },
    "0010-add-customer-tone-mode": { up: (db) => m0010.up(db, dialect) },
    "0011-add-job-cancelled-by": { up: (db) => m0011.up(db, dialect) },
    "0020-create-inbound-sftp-deliveries": { up: (db) => m0020.up(db, dialect) },
    "0025-create-report-rollups": { up: (db) => m0025.up(db, dialect) },
    "0030-create-configuration-tables": { up: (db) => m0030.up(db, dialect) },
    "0035-create-mail-to-fax-tables": { up: (db) => m0035.up(db, dialect) },
    "0042-add-received-page-quality": { up: (db) => m0042.up(db, dialect) },
    "0043-create-failing-numbers": { up: (db) => m0043.up(db, dialect) },
    "0044-add-inbound-pause-and-quota": { up: (db) => m0044.up(db, dialect) },
    "0045-add-job-suppress-blank-pages": { up: (db) => m0045.up(db, dialect) },
    "0046-create-m2f-pin-failures": { up: (db) => m0046.up(db, dialect) },
  };
}
