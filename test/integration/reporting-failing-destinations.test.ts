/**
 * "Top failing destinations" through report_out_failing_numbers (migration 0043), over both
 * dialects, on a seeded history whose numbers fail again and again (a few dozen per prefix):
 *  - the table holds, per customer and per number (and per number over every customer), the sums
 *    of report_out_failures, which equal the failed faxes of the raw rows;
 *  - the top of every scope (a customer, a login, every customer), period (the whole history,
 *    each day, windows, nothing) and filter (country, reason, data center, login) equals the top
 *    computed from the raw rows, ties to the smaller number, in one round of candidates, in many
 *    small rounds, and when the read gives up pruning and groups the period's rows;
 *  - the set-based sweep counts what the per-job path counts, row for row, in every rollup;
 *  - the migration's set-based backfill builds the table the rollup writes keep;
 *  - a purge of old days and a recount of days keep the sums equal.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Kysely } from "kysely";
import * as migration0043 from "../../src/store/migrations/0043-create-failing-numbers.ts";
import { POSTGRES_MIGRATION_DIALECT } from "../../src/store/dialects/postgres/postgres-store.ts";
import { SQLITE_MIGRATION_DIALECT } from "../../src/store/dialects/sqlite/sqlite-store.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { tempDir, testConfig } from "../support/test-node.ts";
import { SEED_DESTINATIONS, seedReportHistory } from "../support/seed-report-history.ts";
import { openStore } from "../../src/store/dialects/open-store.ts";
import type { Store } from "../../src/store/store.ts";
import type { Database } from "../../src/store/database.ts";
import { ALL_CUSTOMERS, ROLLUP_TABLES, dayOf, purgeRollups, resetRollupDays, rollUpJob, rollUpPending, rollUpReceptions } from "../../src/store/queries/report-rollups.ts";
import { readTopFailingNumbers, type RollupScope, type TopFailingNumber } from "../../src/store/queries/report-aggregates.ts";
import { failingDestinations } from "../../src/reporting/aggregate-reports.ts";

const DAY = 86_400_000;
const today = Math.floor(Date.now() / DAY) * DAY;
const FIRST_DAY = today - 12 * DAY;
const DAYS = 10;
const countryOf = (e164: string) => SEED_DESTINATIONS.find((d) => e164.startsWith(d.prefix))!.country;

interface RawFailure {
  custNr: string;
  login: string;
  datacenter: string;
  day: number;
  number: string;
  reason: string;
  attempts: number;
}

for (const dialect of DIALECTS) {
  describe(`${dialect}: top failing destinations`, () => {
    const ts = withDialect(dialect);
    const dir = tempDir("faxline-failing-");
    let store: Store;
    let db: Kysely<Database>;

    const countAll = async () => {
      for (;;) {
        const n = await rollUpPending(db, 700);
        if (n.jobs === 0 && n.receptions === 0) return;
      }
    };
    /** Every failed fax of the raw rows, as the rollups key it. */
    const rawFailures = async (): Promise<RawFailure[]> => {
      const rows = await db
        .selectFrom("recipients as r")
        .innerJoin("jobs as j", "j.id", "r.job_id")
        .select(["r.id", "r.current_e164", "r.reason_code", "r.finished_at", "j.cust_nr", "j.login", "j.accepted_datacenter", "j.datacenter"])
        .where("r.state", "=", "failed")
        .execute();
      const calls = new Map<string, number>();
      for (const a of await db.selectFrom("attempts").select("recipient_id").execute()) calls.set(a.recipient_id, (calls.get(a.recipient_id) ?? 0) + 1);
      return rows.map((r) => ({
        custNr: r.cust_nr,
        login: r.login,
        datacenter: r.accepted_datacenter ?? r.datacenter,
        day: dayOf(Number(r.finished_at)),
        number: r.current_e164!,
        reason: r.reason_code ?? "",
        attempts: calls.get(r.id) ?? 0,
      }));
    };
    /** The top from the raw rows: grouped by number, most failed faxes first, ties to the smaller number. */
    const expectedTop = (raw: RawFailure[], keep: (f: RawFailure) => boolean, limit: number): TopFailingNumber[] => {
      const by = new Map<string, TopFailingNumber>();
      for (const f of raw.filter(keep)) {
        const t = by.get(f.number) ?? { number: f.number, country: countryOf(f.number), failedFaxes: 0, attempts: 0 };
        t.failedFaxes += 1;
        t.attempts += f.attempts;
        by.set(f.number, t);
      }
      return [...by.values()].sort((a, b) => b.failedFaxes - a.failedFaxes || (a.number < b.number ? -1 : 1)).slice(0, limit);
    };
    /** report_out_failing_numbers equals the sums of report_out_failures; its days bound theirs. */
    const assertTableIsTheSums = async (exactDays: boolean) => {
      const table = await db.selectFrom("report_out_failing_numbers").selectAll().execute();
      const failures = await db.selectFrom("report_out_failures").selectAll().execute();
      const sums = new Map<string, { faxes: number; attempts: number; first: number; last: number; country: string }>();
      for (const f of failures) {
        for (const cust of [f.cust_nr, ALL_CUSTOMERS]) {
          const key = `${cust} ${f.number}`;
          const s = sums.get(key) ?? { faxes: 0, attempts: 0, first: Infinity, last: -Infinity, country: f.country };
          s.faxes += Number(f.faxes);
          s.attempts += Number(f.attempts);
          s.first = Math.min(s.first, Number(f.day));
          s.last = Math.max(s.last, Number(f.day));
          sums.set(key, s);
        }
      }
      assert.equal(table.length, sums.size, "a row per customer and number, and per number");
      for (const row of table) {
        const s = sums.get(`${row.cust_nr} ${row.number}`);
        assert.ok(s, `${row.cust_nr} ${row.number} has rows in report_out_failures`);
        assert.equal(Number(row.faxes), s.faxes, `${row.cust_nr} ${row.number} faxes`);
        assert.equal(Number(row.attempts), s.attempts, `${row.cust_nr} ${row.number} attempts`);
        assert.equal(row.country, s.country);
        assert.ok(Number(row.first_day) <= s.first && Number(row.last_day) >= s.last, `${row.cust_nr} ${row.number}: days bound theirs`);
        if (exactDays) assert.deepEqual([Number(row.first_day), Number(row.last_day)], [s.first, s.last]);
      }
    };
    const allRollups = async () => {
      const out: Record<string, string[]> = {};
      for (const table of [...ROLLUP_TABLES, "report_out_failing_numbers" as const]) {
        const rows = await db.selectFrom(table).selectAll().execute();
        out[table] = rows.map((r) => JSON.stringify(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, typeof v === "string" && /^-?\d+$/.test(v) && k !== "number" ? Number(v) : v]))).sort();
      }
      return out;
    };

    before(async () => {
      store = await openStore(testConfig(dir.path, ts.overrides()));
      await store.migrate();
      db = store.db;
      await seedReportHistory(db, {
        customers: [
          { custNr: "ACME", logins: ["acme-a", "acme-b"], topics: ["main"] },
          { custNr: "ACME", logins: ["acme-a", "acme-b"], topics: ["main"] },
          { custNr: "GLOBEX", logins: ["globex"], topics: ["in"] },
        ],
        faxes: 1500,
        receptions: 30,
        firstDay: FIRST_DAY,
        days: DAYS,
        datacenters: ["DE1", "DE2"],
        numbersPerPrefix: 20,
        seed: 4303,
      });
      await countAll();
    });
    after(async () => {
      await store.close();
      dir.remove();
    });

    it("keeps per customer and number the sums of report_out_failures, which are the raw rows' failed faxes", async () => {
      await assertTableIsTheSums(true);
      const raw = await rawFailures();
      const failures = await db.selectFrom("report_out_failures").select((eb) => [eb.fn.sum("faxes").as("faxes"), eb.fn.sum("attempts").as("attempts")]).executeTakeFirstOrThrow();
      assert.equal(Number(failures.faxes), raw.length);
      assert.equal(Number(failures.attempts), raw.reduce((s, f) => s + f.attempts, 0));
      const numbers = new Set(raw.map((f) => f.number));
      assert.ok(raw.length > 2 * numbers.size, `numbers fail again and again (${raw.length} failed faxes, ${numbers.size} numbers)`);
      const everyone = await db.selectFrom("report_out_failing_numbers").select("number").where("cust_nr", "=", ALL_CUSTOMERS).execute();
      assert.equal(everyone.length, numbers.size);
    });

    it("finds the raw rows' top for every scope, period and filter, in one round, in many, and when it groups instead", async () => {
      const raw = await rawFailures();
      const both = ["DE1", "DE2"];
      const scopes: { name: string; scope: RollupScope; keep: (f: RawFailure) => boolean }[] = [
        { name: "ACME", scope: { custNr: "ACME", login: null, datacenters: both }, keep: (f) => f.custNr === "ACME" },
        { name: "acme-b", scope: { custNr: "ACME", login: "acme-b", datacenters: both }, keep: (f) => f.custNr === "ACME" && f.login === "acme-b" },
        { name: "GLOBEX in DE2", scope: { custNr: "GLOBEX", login: null, datacenters: ["DE2"] }, keep: (f) => f.custNr === "GLOBEX" && f.datacenter === "DE2" },
        { name: "every customer", scope: { custNr: null, login: null, datacenters: both }, keep: () => true },
      ];
      const periods: { from: number; to: number }[] = [{ from: FIRST_DAY, to: today }, { from: today, to: today + DAY }, { from: FIRST_DAY + 2 * DAY, to: FIRST_DAY + 5 * DAY }];
      for (let d = 0; d < DAYS; d += 4) periods.push({ from: FIRST_DAY + d * DAY, to: FIRST_DAY + (d + 1) * DAY });
      const filters: { name: string; filters: Record<string, string[]>; keep: (f: RawFailure) => boolean }[] = [
        { name: "no filter", filters: {}, keep: () => true },
        { name: "DEU", filters: { country: ["DEU"] }, keep: (f) => countryOf(f.number) === "DEU" },
        { name: "busy", filters: { reason: ["line_busy"] }, keep: (f) => f.reason === "line_busy" },
        { name: "acme-a, FRA or USA", filters: { login: ["acme-a"], country: ["FRA", "USA"] }, keep: (f) => f.login === "acme-a" && ["FRA", "USA"].includes(countryOf(f.number)) },
      ];
      const roundsOf = [undefined, { first: 2, most: 4, budget: 10_000 }, { first: 3, most: 3, budget: 9 }];
      let compared = 0;
      for (const s of scopes) {
        for (const p of periods) {
          for (const f of filters) {
            for (const limit of [1, 3, 10, 1000]) {
              const expected = expectedTop(raw, (x) => s.keep(x) && f.keep(x) && x.day >= p.from && x.day < p.to, limit);
              for (const rounds of roundsOf) {
                const got = await readTopFailingNumbers(db, { scope: s.scope, fromDay: p.from, toDay: p.to, filters: f.filters, limit, rounds });
                assert.deepEqual(got, expected, `${s.name}, ${new Date(p.from).toISOString().slice(0, 10)}…${new Date(p.to).toISOString().slice(0, 10)}, ${f.name}, top ${limit}, rounds ${JSON.stringify(rounds)}`);
                compared += 1;
              }
            }
          }
        }
      }
      assert.ok(compared > 500);
      // The report: the same top, with each number's reasons summing to its failed faxes.
      const period = { from: FIRST_DAY, to: today };
      const report = await failingDestinations(db, { scope: scopes[0]!.scope, period, filter: { countries: { values: ["deu"] } }, limit: 5 });
      assert.deepEqual(
        report.map(({ reasons: _r, ...t }) => t),
        expectedTop(raw, (x) => x.custNr === "ACME" && countryOf(x.number) === "DEU", 5),
      );
      for (const d of report) {
        const reasons = new Map<string, number>();
        for (const x of raw.filter((y) => y.custNr === "ACME" && y.number === d.number)) reasons.set(x.reason, (reasons.get(x.reason) ?? 0) + 1);
        assert.deepEqual(Object.fromEntries(d.reasons.map((r) => [r.reason, r.faxes])), Object.fromEntries(reasons));
      }
    });

    it("counts set-based (the sweep) what the per-job path counts, in every rollup", async () => {
      const swept = await allRollups();
      await resetRollupDays(db, 0, today + 2 * DAY);
      const uncounted = await db.selectFrom("recipients").select("id").where("rolled_up", "=", 1).execute();
      assert.equal(uncounted.length, 0, "the recount starts from nothing");
      const jobs = await db.selectFrom("jobs").select("id").orderBy("id").execute();
      for (const j of jobs) await db.transaction().execute((trx) => rollUpJob(trx, j.id));
      // Receptions one at a time, as storing one counts it.
      await rollUpReceptions(db, (await db.selectFrom("received_faxes").select("id").orderBy("id").execute()).map((r) => r.id));
      assert.deepEqual(await allRollups(), swept);
    });

    it("backfills the table from the rollups in migration 0043, as the rollup writes keep it", async () => {
      const kept = await allRollups();
      await db.schema.dropTable("report_out_failing_numbers").execute();
      await db.schema.dropIndex("report_out_failures_number_idx").execute();
      // Migration 0043 once more, on the store as it is (later migrations ran after it).
      await migration0043.up(db as Kysely<unknown>, dialect === "sqlite" ? SQLITE_MIGRATION_DIALECT : POSTGRES_MIGRATION_DIALECT);
      assert.deepEqual(await allRollups(), kept);
      await assertTableIsTheSums(true);
    });

    it("keeps the sums through a purge of old days and a recount of days", async () => {
      const raw = await rawFailures();
      const cut = FIRST_DAY + 3 * DAY;
      // Two data centers' retention roles purge the same days at once: each day is taken once.
      const purged = await Promise.all([purgeRollups(db, cut), purgeRollups(db, cut)]);
      assert.ok(purged.some((n) => n > 0), "the days were purged");
      await assertTableIsTheSums(false);
      const scope: RollupScope = { custNr: "ACME", login: null, datacenters: ["DE1", "DE2"] };
      const top = (from: number, to: number) => readTopFailingNumbers(db, { scope, fromDay: from, toDay: to, filters: {}, limit: 10 });
      assert.deepEqual(await top(FIRST_DAY, today), expectedTop(raw, (x) => x.custNr === "ACME" && x.day >= cut, 10), "the purged days count no more");
      // A recount of two days (faxline report rebuild-rollups): taken out, then counted again.
      await resetRollupDays(db, cut + DAY, cut + 3 * DAY);
      await countAll();
      await assertTableIsTheSums(false);
      assert.deepEqual(await top(FIRST_DAY, today), expectedTop(raw, (x) => x.custNr === "ACME" && x.day >= cut, 10));
      assert.deepEqual(await top(cut + DAY, cut + 2 * DAY), expectedTop(raw, (x) => x.custNr === "ACME" && x.day === cut + DAY, 10));
      // Everything purged: no number is left.
      await purgeRollups(db, today + 2 * DAY);
      assert.equal((await db.selectFrom("report_out_failing_numbers").select("number").execute()).length, 0);
      assert.deepEqual(await top(FIRST_DAY, today), []);
    });
  });
}
