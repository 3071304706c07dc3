/**
 * The reporting interface over both dialects, through HTTP with a plain GraphQL client (fetch
 * POST with a query string): a seeded history with known counts (two customers, logins, both
 * data centers, six countries, six outcomes, several calls per fax, receptions), counted into the
 * rollups by the sweep (the backfill path), then
 *  - the provider's two example queries, as the provider writes them, run unchanged and page
 *    correctly (each record once, in keyTimestamp order, hasMoreElements until the last page);
 *  - every aggregate equals the count from the raw rows;
 *  - the tenancy matrix (login, manager, operator, other customer, no credentials);
 *  - depth and cost limits, the 45-day span, the history, bad periods and pages;
 *  - the rollups keep their counts through a retention purge and a data-center adoption;
 *  - the exports stream what the queries answer.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Kysely } from "kysely";
import { DIALECTS, testStore, type TestStore } from "../support/dialects.ts";
import { createTestLogin, startTestNode, type TestNode } from "../support/test-node.ts";
import { SEED_DESTINATIONS, seedReportHistory } from "../support/seed-report-history.ts";
import { rollUpPending } from "../../src/store/queries/report-rollups.ts";
import { deleteJobs } from "../../src/store/queries/job-reports.ts";
import { adoptNow } from "../../src/cluster/datacenter-adoption.ts";
import { failureReason, isFailureReasonCode } from "../../src/errors/failure-reasons.ts";
import type { Database } from "../../src/store/database.ts";

const DAY = 86_400_000;
const today = Math.floor(Date.now() / DAY) * DAY;
const FIRST_DAY = today - 12 * DAY;
const DAYS = 10;

/** The provider's outbound example, as documented (developers.retarus.com/common/graphql-fax-out-udr-example). */
const FAX_OUT_EXAMPLE = `query faxOutUdrReport (
  $customerId: String!
  $filterFax: FaxOutColumnUdrFilters
  $datePeriod: DatePeriod!
  $pageIndex: Int
  $pageSize: Int
  $sort: SortDirection
) {
  faxOutUdrReport(
    customerId: $customerId
    datePeriod: $datePeriod
    filter: $filterFax
    page: $pageIndex
    size: $pageSize
    sort: $sort
  ) {
    content {
      faxId
      jobId
      accountId
      accountName
      accountServerId
      accountService
      attemptPages
      attemptSeqNo
      baudRate
      billedCountry
      callConnectedAt
      callDuration
      calledCountry
      calledCsId
      calledNumber
      calledZone
      callEndedAt
      callingTsId
      callInviteAt
      docPages
      faxCustomerRef
      jobArchivePurgeAt
      jobBillingCode
      jobBillingInfo
      jobCustomerId
      jobCustomerRef
      jobCustomerResolution
      jobCustomerStartFaxAt
      jobCustomerTags
      jobExpress
      jobPersonalized
      jobSubmissionDc
      jobSubmittedAt
      keyTimestamp
      lastAttemptEndedAt
      lastAttemptSeqNo
      maxPageTransmitted
      processingFinalAt
      statusCode
      statusName
      statusReason
      sumCallDurations
      sumPagesTransmitted
      timeToFirstDial
      virtualPagesBilled
    }
    pageIndex
    pageSize
    hasMoreElements
  }
}`;

/** The provider's inbound example, as documented (…/graphql-fax-in-udr-example). */
const FAX_IN_EXAMPLE = `query faxInUdrReport (
  $customerId: String!
  $datePeriod: DatePeriod!
  $pageIndex: Int
  $pageSize: Int
  $sort: SortDirection
) {
  faxInUdrReport(
    customerId: $customerId
    datePeriod: $datePeriod
    page: $pageIndex
    size: $pageSize
    sort: $sort
  ) {
    content {
      accountingService
      allPages
      archivePurgeAt
      archivingStatus
      baudRate
      billingCode
      callConnectedAt
      calledCountry
      calledCsId
      calledNumber
      calledNumberDisplay
      callingNumber
      callingTsId
      callStartedAt
      confirmedPages
      customerId
      deliveryRecipients
      deliverySender
      deliverySenderUser
      discardedPages
      docMimeType
      documentDeliveryStatus
      faxFileSize
      faxTransmitStatus
      keyTimestamp
      recipientsCount
      resolution
      secondaryDeliveryRecipients
      virtualPagesBilled
    }
    pageIndex
    pageSize
    hasMoreElements
  }
}`;

const countryOf = (e164: string) => SEED_DESTINATIONS.find((d) => e164.startsWith(d.prefix))!.country;
const iso = (ms: number) => new Date(ms).toISOString();

interface Creds {
  login: string;
  password: string;
}

for (const dialect of DIALECTS) {
  describe(`${dialect}: the reporting interface`, () => {
    let store: TestStore;
    let node: TestNode;
    let db: Kysely<Database>;
    const acmeLogin: Creds = { login: "acme-a", password: "acme-a-password" };
    const acmeOther: Creds = { login: "acme-b", password: "acme-b-password" };
    const acmeManager: Creds = { login: "acme-boss", password: "acme-boss-password" };
    const globexLogin: Creds = { login: "globex", password: "globex-password" };
    const operator: Creds = { login: "ops", password: "ops-password" };

    const graphql = async (creds: Creds | null, query: string, variables: Record<string, unknown> = {}) => {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (creds) headers.authorization = `Basic ${Buffer.from(`${creds.login}:${creds.password}`).toString("base64")}`;
      const res = await fetch(`${node.url}/graphql`, { method: "POST", headers, body: JSON.stringify({ query, variables }) });
      return { status: res.status, body: (await res.json()) as { data?: any; errors?: { message: string; extensions: { code: string; status: number } }[] } };
    };
    const download = async (creds: Creds, path: string) => {
      const res = await fetch(`${node.url}/reporting/v1${path}`, { headers: { authorization: `Basic ${Buffer.from(`${creds.login}:${creds.password}`).toString("base64")}` } });
      return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
    };
    const countAll = async () => {
      for (;;) {
        const n = await rollUpPending(db, 1000);
        if (n.jobs === 0 && n.receptions === 0) return;
      }
    };
    /** The raw rows: every fax with its job and calls. */
    const rawFaxes = async () => {
      const recipients = await db.selectFrom("recipients").innerJoin("jobs", "jobs.id", "recipients.job_id").select(["recipients.id", "recipients.status", "recipients.reason_code", "recipients.finished_at", "recipients.current_e164", "recipients.pages_sent", "jobs.cust_nr", "jobs.login", "jobs.accepted_datacenter"]).execute();
      const attempts = await db.selectFrom("attempts").selectAll().execute();
      return { recipients, attempts };
    };

    before(async () => {
      store = await testStore(dialect);
      // The api role alone: the seeded history is counted by this test, not by a retention round.
      node = await startTestNode({ ...store.overrides, "node.roles": "api" });
      db = node.node.context.store.db;
      await createTestLogin(node, { custNr: "ACME", ...acmeLogin, isTest: false });
      await createTestLogin(node, { custNr: "ACME", ...acmeOther, isTest: false });
      await createTestLogin(node, { custNr: "ACME", ...acmeManager, isTest: false, isManager: true });
      await createTestLogin(node, { custNr: "GLOBEX", ...globexLogin, isTest: false });
      await createTestLogin(node, { custNr: "OPS", ...operator, isTest: false, isAdmin: true });
      await seedReportHistory(db, {
        customers: [
          { custNr: "ACME", logins: [acmeLogin.login, acmeOther.login], topics: ["main", "sales"] },
          { custNr: "GLOBEX", logins: [globexLogin.login], topics: ["in"] },
        ],
        faxes: 400,
        receptions: 80,
        firstDay: FIRST_DAY,
        days: DAYS,
        datacenters: ["DE1", "DE2"],
      });
      await countAll();
    });
    after(async () => {
      await node.stop();
      await store.drop();
    });

    it("runs the provider's outbound example unchanged and pages through it", async () => {
      const period = { fromIncluded: iso(FIRST_DAY), toExcluded: iso(today) };
      const filterFax = { statusName: { values: ["OK"] }, jobBillingCode: { values: ["CC-1"] } };
      const seen: any[] = [];
      for (let pageIndex = 0; ; pageIndex++) {
        const { status, body } = await graphql(acmeManager, FAX_OUT_EXAMPLE, { customerId: "ACME", datePeriod: period, filterFax, pageIndex, pageSize: 7, sort: "ASC" });
        assert.equal(status, 200, JSON.stringify(body.errors));
        const page = body.data.faxOutUdrReport;
        assert.equal(page.pageIndex, pageIndex);
        assert.equal(page.pageSize, 7);
        seen.push(...page.content);
        if (!page.hasMoreElements) {
          assert.ok(page.content.length <= 7);
          break;
        }
        assert.equal(page.content.length, 7);
      }
      // The raw rows: delivered calls of ACME's CC-1 jobs.
      const expected = await db
        .selectFrom("attempts")
        .innerJoin("jobs", "jobs.id", "attempts.job_id")
        .select(["attempts.id", "attempts.recipient_id", "attempts.attempt_no", "attempts.ended_at", "attempts.duration_secs", "attempts.e164"])
        .where("jobs.cust_nr", "=", "ACME")
        .where("jobs.billing_code", "=", "CC-1")
        .where("attempts.result", "=", "delivered")
        .orderBy("attempts.ended_at")
        .orderBy("attempts.id")
        .execute();
      assert.ok(expected.length > 10, "the seed has delivered CC-1 calls");
      assert.deepEqual(
        seen.map((r) => `${r.faxId}#${r.attemptSeqNo}`),
        expected.map((a) => `${a.recipient_id}#${a.attempt_no}`),
      );
      const first = seen[0];
      const raw = expected[0]!;
      assert.equal(first.statusName, "OK");
      assert.equal(first.statusCode, "delivered");
      assert.equal(first.jobBillingCode, "CC-1");
      assert.equal(first.jobCustomerId, "ACME");
      assert.equal(first.callDuration, Number(raw.duration_secs) * 1000);
      assert.equal(first.keyTimestamp, iso(Number(raw.ended_at)));
      assert.equal(first.calledCountry, countryOf(raw.e164));
      assert.equal(first.billedCountry, first.calledCountry);
      assert.equal(first.calledZone, first.calledCountry === "DEU" ? "NATIONAL" : "INTERNATIONAL");
      assert.equal(first.accountService, "API");
      assert.equal(first.attemptPages, 2);
      assert.equal(first.baudRate, 14400);
      assert.ok(first.jobSubmissionDc === "DE1" || first.jobSubmissionDc === "DE2");
      assert.equal(typeof first.timeToFirstDial, "number");
      assert.ok(first.sumCallDurations >= first.callDuration);
      assert.equal(first.lastAttemptSeqNo, first.attemptSeqNo, "a delivered call is its fax's last");
      // Every field the provider lists is there (null where Faxline has no datum).
      for (const field of FAX_OUT_EXAMPLE.match(/^ {6}(\w+)$/gm)!.map((f) => f.trim())) assert.ok(field in first, field);

      // DESC: the same records the other way round.
      const desc = await graphql(acmeManager, FAX_OUT_EXAMPLE, { customerId: "ACME", datePeriod: period, filterFax, pageIndex: 0, pageSize: 10000, sort: "DESC" });
      assert.deepEqual(
        desc.body.data.faxOutUdrReport.content.map((r: any) => `${r.faxId}#${r.attemptSeqNo}`),
        [...seen].reverse().map((r) => `${r.faxId}#${r.attemptSeqNo}`),
      );
    });

    it("runs the provider's inbound example unchanged and pages through it", async () => {
      const period = { fromIncluded: iso(FIRST_DAY), toExcluded: iso(today) };
      const seen: any[] = [];
      for (let pageIndex = 0; ; pageIndex++) {
        const { status, body } = await graphql(acmeLogin, FAX_IN_EXAMPLE, { customerId: "ACME", datePeriod: period, pageIndex, pageSize: 3, sort: "ASC" });
        assert.equal(status, 200, JSON.stringify(body.errors));
        seen.push(...body.data.faxInUdrReport.content);
        if (!body.data.faxInUdrReport.hasMoreElements) break;
      }
      const expected = await db.selectFrom("received_faxes").select(["id", "status", "pages", "received_at"]).where("cust_nr", "=", "ACME").orderBy("received_at").orderBy("id").execute();
      assert.ok(expected.length > 10);
      assert.deepEqual(seen.map((r) => r.keyTimestamp), expected.map((r) => iso(Number(r.received_at))));
      assert.deepEqual(seen.map((r) => r.faxTransmitStatus), expected.map((r) => r.status));
      assert.deepEqual(seen.map((r) => r.confirmedPages), expected.map((r) => r.pages));
      const first = seen[0];
      assert.equal(first.customerId, "ACME");
      assert.equal(first.accountingService, "F2WSPull", "no deliveries queued: the pull API");
      assert.equal(first.calledCountry, "DEU");
      assert.equal(first.docMimeType, "image/tiff");
    });

    it("answers every aggregate with the counts of the raw rows", async () => {
      const { recipients, attempts } = await rawFaxes();
      const period = { fromIncluded: iso(FIRST_DAY), toExcluded: iso(today) };
      const q = `query($p: DatePeriod!) {
        faxOutSummary(customerId: "ACME", datePeriod: $p, groupBy: [DAY, COUNTRY, STATUS]) {
          totals { faxes delivered failed pages attempts deliveredAttempts lineSeconds successRate attemptsPerDeliveredFax }
          rows { period country status faxes delivered pages attempts lineSeconds }
          truncated
        }
        weekly: faxOutSummary(customerId: "ACME", datePeriod: $p, groupBy: [WEEK]) { rows { period faxes } }
        calls: faxOutCallSummary(customerId: "ACME", datePeriod: $p, groupBy: [TRUNK, RESULT]) { totals { calls connected delivered lineSeconds } rows { trunk result calls delivered pages lineSeconds } }
        received: faxInSummary(customerId: "ACME", datePeriod: $p, groupBy: [DAY, STATUS]) { totals { faxes ok partial failed pages } rows { period status faxes pages lineSeconds } }
        failing: faxOutFailingDestinations(customerId: "ACME", datePeriod: $p, limit: 5) { number country failedFaxes attempts reasons { reason faxes } }
      }`;
      const { status, body } = await graphql(acmeManager, q, { p: period });
      assert.equal(status, 200, JSON.stringify(body.errors));
      const acme = recipients.filter((r) => r.cust_nr === "ACME");
      const callsOf = (id: string) => attempts.filter((a) => a.recipient_id === id);
      const delivered = acme.filter((r) => r.status === "OK");
      const t = body.data.faxOutSummary.totals;
      assert.equal(t.faxes, acme.length);
      assert.equal(t.delivered, delivered.length);
      assert.equal(t.failed, acme.length - delivered.length);
      assert.equal(t.pages, acme.reduce((s, r) => s + r.pages_sent, 0));
      assert.equal(t.attempts, acme.reduce((s, r) => s + callsOf(r.id).length, 0));
      assert.equal(t.deliveredAttempts, delivered.reduce((s, r) => s + callsOf(r.id).length, 0));
      assert.equal(t.lineSeconds, acme.reduce((s, r) => s + callsOf(r.id).reduce((x, a) => x + a.duration_secs, 0), 0));
      assert.equal(t.successRate, delivered.length / acme.length);
      assert.equal(t.attemptsPerDeliveredFax, t.deliveredAttempts / delivered.length);
      // Each row: that day's, country's and status's faxes.
      const key = (r: { finished_at: unknown; current_e164: string | null; status: string | null }) => `${new Date(Number(r.finished_at)).toISOString().slice(0, 10)}|${countryOf(r.current_e164!)}|${r.status}`;
      const expectedRows = new Map<string, number>();
      for (const r of acme) expectedRows.set(key(r), (expectedRows.get(key(r)) ?? 0) + 1);
      assert.equal(body.data.faxOutSummary.rows.length, expectedRows.size);
      for (const row of body.data.faxOutSummary.rows) assert.equal(row.faxes, expectedRows.get(`${row.period}|${row.country}|${row.status}`), `${row.period} ${row.country} ${row.status}`);
      assert.equal(body.data.faxOutSummary.truncated, false);
      // Weeks start on Mondays and sum their days.
      const weekly = new Map<string, number>();
      for (const r of acme) {
        const d = new Date(Number(r.finished_at));
        const monday = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - ((d.getUTCDay() + 6) % 7) * DAY;
        const k = iso(monday).slice(0, 10);
        weekly.set(k, (weekly.get(k) ?? 0) + 1);
      }
      assert.deepEqual(Object.fromEntries(body.data.weekly.rows.map((r: any) => [r.period, r.faxes])), Object.fromEntries(weekly));
      // Calls by trunk and result.
      const acmeCalls = attempts.filter((a) => acme.some((r) => r.id === a.recipient_id));
      assert.equal(body.data.calls.totals.calls, acmeCalls.length);
      assert.equal(body.data.calls.totals.delivered, acmeCalls.filter((a) => a.result === "delivered").length);
      assert.equal(body.data.calls.totals.connected, acmeCalls.filter((a) => a.duration_secs > 0).length);
      for (const row of body.data.calls.rows) {
        const match = acmeCalls.filter((a) => a.trunk === row.trunk && a.result === row.result);
        assert.equal(row.calls, match.length, `${row.trunk} ${row.result}`);
        assert.equal(row.lineSeconds, match.reduce((s, a) => s + a.duration_secs, 0));
      }
      // Receptions by day and status.
      const received = await db.selectFrom("received_faxes").selectAll().where("cust_nr", "=", "ACME").execute();
      assert.equal(body.data.received.totals.faxes, received.length);
      assert.equal(body.data.received.totals.ok, received.filter((r) => r.status === "OK").length);
      assert.equal(body.data.received.totals.partial, received.filter((r) => r.status === "PARTIAL").length);
      assert.equal(body.data.received.totals.pages, received.reduce((s, r) => s + r.pages, 0));
      for (const row of body.data.received.rows) {
        assert.equal(row.faxes, received.filter((r) => r.status === row.status && iso(Number(r.received_at)).slice(0, 10) === row.period).length);
      }
      // Failing destinations: the numbers with the most failed faxes.
      const failedBy = new Map<string, number>();
      for (const r of acme.filter((x) => x.status !== "OK")) failedBy.set(r.current_e164!, (failedBy.get(r.current_e164!) ?? 0) + 1);
      const most = Math.max(...failedBy.values());
      assert.equal(body.data.failing[0].failedFaxes, most);
      for (const d of body.data.failing) {
        assert.equal(d.failedFaxes, failedBy.get(d.number));
        assert.equal(d.country, countryOf(d.number));
        assert.equal(d.reasons.reduce((s: number, x: any) => s + x.faxes, 0), d.failedFaxes);
        for (const x of d.reasons) assert.ok(isFailureReasonCode(x.reason) && failureReason(x.reason).status !== "OK");
      }
    });

    it("shows a login its own jobs, a manager the customer's, an operator any customer's", async () => {
      const period = { fromIncluded: iso(FIRST_DAY), toExcluded: iso(today) };
      const q = `query($c: String, $p: DatePeriod!) { faxOutSummary(customerId: $c, datePeriod: $p) { totals { faxes } } faxInSummary(customerId: $c, datePeriod: $p) { totals { faxes } } }`;
      const { recipients } = await rawFaxes();
      const count = (f: (r: (typeof recipients)[number]) => boolean) => recipients.filter(f).length;
      const receptions = async (custNr: string) => (await db.selectFrom("received_faxes").select("id").where("cust_nr", "=", custNr).execute()).length;
      const totals = async (creds: Creds, c: string | null) => {
        const { status, body } = await graphql(creds, q, { c, p: period });
        return { status, out: body.data?.faxOutSummary?.totals.faxes, in: body.data?.faxInSummary?.totals.faxes, error: body.errors?.[0]?.extensions.code };
      };
      assert.deepEqual(await totals(acmeLogin, "ACME"), { status: 200, out: count((r) => r.login === acmeLogin.login), in: await receptions("ACME"), error: undefined });
      assert.deepEqual(await totals(acmeLogin, null), { status: 200, out: count((r) => r.login === acmeLogin.login), in: await receptions("ACME"), error: undefined });
      assert.deepEqual(await totals(acmeManager, "ACME"), { status: 200, out: count((r) => r.cust_nr === "ACME"), in: await receptions("ACME"), error: undefined });
      assert.deepEqual(await totals(operator, "GLOBEX"), { status: 200, out: count((r) => r.cust_nr === "GLOBEX"), in: await receptions("GLOBEX"), error: undefined });
      assert.deepEqual(await totals(operator, null), { status: 200, out: recipients.length, in: await receptions("ACME") + (await receptions("GLOBEX")), error: undefined });
      // Another customer's reports: refused as the REST API refuses another customer's path.
      assert.deepEqual(await totals(acmeManager, "GLOBEX"), { status: 401, out: undefined, in: undefined, error: "customer_mismatch" });
      const records = await graphql(globexLogin, `{ faxOutUdrReport(customerId: "ACME", datePeriod: {fromIncluded: "${iso(FIRST_DAY)}", toExcluded: "${iso(today)}"}) { content { faxId } } }`);
      assert.equal(records.status, 401);
      assert.equal(records.body.errors![0]!.extensions.code, "customer_mismatch");
      // A plain login's records are its own jobs' calls only.
      const own = await graphql(acmeOther, `{ faxOutUdrReport(customerId: "ACME", datePeriod: {fromIncluded: "${iso(FIRST_DAY)}", toExcluded: "${iso(today)}"}, size: 10000) { content { accountId } } }`);
      assert.ok(own.body.data.faxOutUdrReport.content.length > 0);
      assert.ok(own.body.data.faxOutUdrReport.content.every((r: any) => r.accountId === acmeOther.login));
      // No credentials, wrong password.
      for (const creds of [null, { login: acmeLogin.login, password: "wrong" }]) {
        const res = await graphql(creds, "{ __typename }");
        assert.equal(res.status, 401);
        assert.equal(res.body.errors![0]!.extensions.code, "authentication_failed");
      }
    });

    it("refuses queries past the limits in the catalogue's words", async () => {
      const p = (from: number, to: number) => `{fromIncluded: "${iso(from)}", toExcluded: "${iso(to)}"}`;
      const code = async (query: string) => {
        const { status, body } = await graphql(acmeManager, query);
        return `${status} ${body.errors?.[0]?.extensions.code}`;
      };
      assert.equal(await code(`{ faxOutUdrReport(customerId: "ACME", datePeriod: ${p(today - 46 * DAY, today)}) { pageIndex } }`), "400 date_period_too_long");
      assert.equal(await code(`{ faxOutUdrReport(customerId: "ACME", datePeriod: ${p(today - 45 * DAY, today)}) { pageIndex } }`), "200 undefined");
      assert.equal(await code(`{ faxInUdrReport(customerId: "ACME", datePeriod: ${p(today - 91 * DAY, today - 80 * DAY)}) { pageIndex } }`), "400 date_period_too_old");
      assert.equal(await code(`{ faxOutUdrReport(customerId: "ACME", datePeriod: {fromIncluded: "yesterday", toExcluded: "${iso(today)}"}) { pageIndex } }`), "400 date_period_invalid");
      assert.equal(await code(`{ faxOutUdrReport(customerId: "ACME", datePeriod: ${p(today, today - DAY)}) { pageIndex } }`), "400 date_period_invalid");
      assert.equal(await code(`{ faxOutSummary(datePeriod: ${p(today - DAY + 3_600_000, today)}) { totals { faxes } } }`), "400 date_period_invalid");
      assert.equal(await code(`{ faxOutUdrReport(customerId: "ACME", datePeriod: ${p(today - DAY, today)}, page: -1) { pageIndex } }`), "400 page_invalid");
      assert.equal(await code(`{ faxOutUdrReport(customerId: "ACME", datePeriod: ${p(today - DAY, today)}, size: 10001) { pageIndex } }`), "400 page_invalid");
      assert.equal(await code(`{ faxOutUdrReport(customerId: "ACME", datePeriod: ${p(today - DAY, today)}) { nonsense } }`), "400 graphql_query_invalid");
      assert.equal(await code(`{ faxOutUdrReport(`), "400 graphql_query_invalid");
      // Cost: a full page of 10 000 records with every field passes; three of them at once do not.
      const fields = FAX_OUT_EXAMPLE.slice(FAX_OUT_EXAMPLE.indexOf("content {"), FAX_OUT_EXAMPLE.indexOf("pageIndex\n    pageSize"));
      const page = (alias: string) => `${alias}: faxOutUdrReport(customerId: "ACME", datePeriod: ${p(today - DAY, today)}, size: 10000) { ${fields} }`;
      assert.equal(await code(`{ ${page("a")} }`), "200 undefined");
      assert.equal(await code(`{ ${page("a")} ${page("b")} ${page("c")} }`), "400 query_too_costly");
      // Introspection works (its depth is not counted).
      const intro = await graphql(acmeManager, "{ __schema { queryType { name fields { name args { name type { kind ofType { kind ofType { name } } } } } } } }");
      assert.equal(intro.status, 200);
      assert.ok(intro.body.data.__schema.queryType.fields.some((f: any) => f.name === "faxOutUdrReport"));
    });

    it("keeps the aggregates through a retention purge and a data-center adoption", async () => {
      const period = { fromIncluded: iso(FIRST_DAY), toExcluded: iso(today) };
      const q = `query($p: DatePeriod!) {
        faxOutSummary(datePeriod: $p, groupBy: [DAY, DATACENTER, STATUS]) { totals { faxes delivered attempts lineSeconds } rows { period datacenter status faxes attempts } }
        faxOutCallSummary(datePeriod: $p, groupBy: [DATACENTER]) { rows { datacenter calls lineSeconds } }
        faxInSummary(datePeriod: $p, groupBy: [DATACENTER, STATUS]) { rows { datacenter status faxes } }
      }`;
      const before = (await graphql(operator, q, { p: period })).body.data;
      assert.ok(before.faxOutSummary.totals.faxes > 0);
      // Purge: the older half of the jobs go, as the retention role (or a client's DELETE) deletes them.
      const old = await db.selectFrom("jobs").select("id").where("completed_at", "<", FIRST_DAY + 5 * DAY).execute();
      assert.ok(old.length > 50);
      await deleteJobs(db, old.map((j) => j.id));
      const records = await graphql(operator, `query($p: DatePeriod!) { faxOutUdrReport(customerId: "ACME", datePeriod: $p, size: 10000) { content { faxId } } }`, { p: period });
      const remaining = await db.selectFrom("attempts").innerJoin("jobs", "jobs.id", "attempts.job_id").select("attempts.id").where("jobs.cust_nr", "=", "ACME").execute();
      assert.equal(records.body.data.faxOutUdrReport.content.length, remaining.length, "usage records go with their rows");
      assert.deepEqual((await graphql(operator, q, { p: period })).body.data, before, "the rollups keep the purged faxes' counts");
      // Adoption: DE2 takes over DE1's jobs and receptions; counts stay with the data center that accepted them.
      await adoptNow(db, { from: "DE1", to: "DE2", node: "test", now: Date.now() });
      assert.equal((await db.selectFrom("jobs").select("id").where("datacenter", "=", "DE1").execute()).length, 0);
      await countAll();
      assert.deepEqual((await graphql(operator, q, { p: period })).body.data, before, "an adoption moves no counts");
    });

    it("exports the records and summaries the queries answer, as CSV and JSON", async () => {
      const from = iso(FIRST_DAY);
      const to = iso(today);
      const { body } = await graphql(acmeManager, `query($p: DatePeriod!) { faxOutUdrReport(customerId: "ACME", datePeriod: $p, size: 10000, filter: {statusName: {values: ["BUSY", "NOFAX"]}}) { content { faxId attemptSeqNo statusName calledNumber callDuration keyTimestamp jobCustomerTags } } }`, { p: { fromIncluded: from, toExcluded: to } });
      const content = body.data.faxOutUdrReport.content as any[];
      assert.ok(content.length > 5);
      const csv = await download(acmeManager, `/ACME/fax-out/records?from=${from}&to=${to}&statusName=BUSY,NOFAX`);
      assert.equal(csv.status, 200);
      assert.match(csv.type!, /^text\/csv/);
      const lines = csv.text.trimEnd().split("\r\n");
      const header = lines[0]!.split(",");
      assert.equal(header[0], "faxId");
      assert.equal(lines.length - 1, content.length);
      const col = (name: string) => header.indexOf(name);
      lines.slice(1).forEach((line, i) => {
        const cells = line.split(",");
        assert.equal(cells[col("faxId")], content[i].faxId);
        assert.equal(Number(cells[col("attemptSeqNo")]), content[i].attemptSeqNo);
        assert.equal(cells[col("statusName")], content[i].statusName);
        assert.equal(cells[col("calledNumber")], content[i].calledNumber, "fax numbers keep their +");
        assert.equal(Number(cells[col("callDuration")]), content[i].callDuration);
        assert.equal(cells[col("keyTimestamp")], content[i].keyTimestamp);
      });
      const json = await download(acmeManager, `/ACME/fax-out/records?from=${from}&to=${to}&statusName=BUSY,NOFAX&format=json`);
      const parsed = JSON.parse(json.text) as any[];
      assert.deepEqual(parsed.map((r) => [r.faxId, r.attemptSeqNo, r.callDuration, r.jobCustomerTags]), content.map((r) => [r.faxId, r.attemptSeqNo, r.callDuration, r.jobCustomerTags]));
      // The summary export holds the query's rows.
      const summary = await graphql(acmeManager, `query($p: DatePeriod!) { faxOutSummary(customerId: "ACME", datePeriod: $p, groupBy: [DAY, STATUS]) { rows { period status faxes successRate } } }`, { p: { fromIncluded: from, toExcluded: to } });
      const exported = await download(acmeManager, `/ACME/fax-out/summary?from=${from}&to=${to}&groupBy=DAY,STATUS`);
      const rows = exported.text.trimEnd().split("\r\n");
      assert.deepEqual(rows[0]!.split(",").slice(0, 3), ["period", "status", "faxes"]);
      assert.deepEqual(
        rows.slice(1).map((l) => l.split(",").slice(0, 3).join(",")),
        summary.body.data.faxOutSummary.rows.map((r: any) => `${r.period},${r.status},${r.faxes}`),
      );
      // Errors before the first byte are the API's error bodies.
      const refused = await download(acmeLogin, `/GLOBEX/fax-in/records?from=${from}&to=${to}`);
      assert.equal(refused.status, 401);
      assert.equal(JSON.parse(refused.text).error, "customer_mismatch");
      const unknown = await download(acmeLogin, `/ACME/fax-out/records?from=${from}&to=${to}&colour=red`);
      assert.equal(unknown.status, 400);
    });
  });
}
