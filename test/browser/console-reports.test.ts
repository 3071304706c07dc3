/**
 * The console's Reports page in a real headless Chromium: over a seeded history of a month (two
 * customers, several logins, both data centers, six countries and outcomes, receptions) counted
 * into the rollups, the page shows the numbers of the raw rows; each chart's CSV holds the
 * numbers the reporting interface answers over plain HTTP GraphQL; filters narrow the charts and
 * the export links, whose streamed usage records are the GraphQL query's; a plain login sees its
 * own faxes, a manager its customer's, an operator any customer's; German; axe-core clean.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import type { Kysely } from "kysely";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import type { Database } from "../../src/store/database.ts";
import { rollUpPending } from "../../src/store/queries/report-rollups.ts";
import { accessibilityViolations, describeViolations, launchBrowser } from "../support/browser.ts";
import { seedReportHistory } from "../support/seed-report-history.ts";
import { createTestLogin, startTestNode, type TestNode } from "../support/test-node.ts";

const DAY = 86_400_000;
const today = Math.floor(Date.now() / DAY) * DAY;
const FIRST_DAY = today - 29 * DAY;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const PERIOD = { fromIncluded: new Date(FIRST_DAY).toISOString(), toExcluded: new Date(today + DAY).toISOString() };

interface Creds {
  login: string;
  password: string;
}

describe("the console's Reports page in Chromium", () => {
  let node: TestNode;
  let db: Kysely<Database>;
  let browser: Browser;
  const plain: Creds = { login: "acme-a", password: "acme-a-password" };
  const manager: Creds = { login: "acme-boss", password: "acme-boss-password" };
  const operator: Creds = { login: "ops", password: "ops-password" };

  before(async () => {
    // The api role alone: the history is counted here, not by a retention round.
    node = await startTestNode({ "node.roles": "api" });
    db = node.node.context.store.db;
    await createTestLogin(node, { custNr: "ACME", ...plain, isTest: false });
    await createTestLogin(node, { custNr: "ACME", ...manager, isTest: false, isManager: true });
    await createTestLogin(node, { custNr: "OPS", ...operator, isTest: false, isAdmin: true });
    await seedReportHistory(db, {
      customers: [
        { custNr: "ACME", logins: [plain.login, "acme-b"], topics: ["main", "sales"] },
        { custNr: "GLOBEX", logins: ["globex"], topics: ["in"] },
      ],
      faxes: 600,
      receptions: 150,
      firstDay: FIRST_DAY,
      days: 29,
      datacenters: ["DE1", "DE2"],
    });
    for (;;) {
      const n = await rollUpPending(db, 1000);
      if (n.jobs === 0 && n.receptions === 0) break;
    }
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await node?.stop();
  });

  /** The reporting interface over plain HTTP, as any GraphQL client asks it. */
  async function graphql(creds: Creds, query: string, variables: Record<string, unknown> = {}) {
    const res = await fetch(`${node.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Basic ${Buffer.from(`${creds.login}:${creds.password}`).toString("base64")}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data: any; errors?: unknown[] };
    assert.equal(res.status, 200, JSON.stringify(body.errors));
    return body.data;
  }

  /** The raw rows: faxes (recipients) and receptions of a customer, optionally of one login. */
  async function rawCounts(custNr: string, login?: string) {
    let sent = db.selectFrom("recipients").innerJoin("jobs", "jobs.id", "recipients.job_id").select((eb) => eb.fn.countAll().as("n")).where("jobs.cust_nr", "=", custNr);
    if (login) sent = sent.where("jobs.login", "=", login);
    const delivered = await sent.where("recipients.status", "=", "OK").executeTakeFirstOrThrow();
    const all = await sent.executeTakeFirstOrThrow();
    const received = await db.selectFrom("received_faxes").select((eb) => eb.fn.countAll().as("n")).where("cust_nr", "=", custNr).executeTakeFirstOrThrow();
    return { sent: Number(all.n), delivered: Number(delivered.n), received: Number(received.n) };
  }

  async function signedIn(account: Creds, locale = "en-GB"): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ locale, viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    await page.goto(`${node.url}/`);
    await page.getByLabel("Login").fill(account.login);
    await page.getByLabel(locale.startsWith("de") ? "Passwort" : "Password").fill(account.password);
    await page.getByRole("button", { name: locale.startsWith("de") ? "Anmelden" : "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: locale.startsWith("de") ? "Aufträge" : "Jobs" }).waitFor();
    await page.getByRole("link", { name: locale.startsWith("de") ? "Berichte" : "Reports" }).click();
    await page.getByRole("heading", { level: 1, name: locale.startsWith("de") ? "Berichte" : "Reports" }).waitFor();
    await page.locator('[data-chart="chart-faxes"] .chart-box svg').waitFor();
    return { context, page };
  }

  async function expectAccessible(page: Page, what: string) {
    const violations = await accessibilityViolations(page);
    assert.deepEqual(violations.map((v) => v.id), [], `${what}:\n${describeViolations(violations)}`);
  }

  /** A chart's CSV as the browser downloads it: header and rows of cells. */
  async function chartCsv(page: Page, chart: string): Promise<{ header: string[]; rows: string[][]; name: string }> {
    const [download] = await Promise.all([page.waitForEvent("download"), page.locator(`[data-chart="${chart}"]`).getByRole("button", { name: /Download CSV|CSV herunterladen/ }).click()]);
    const lines = (await readFile((await download.path())!, "utf8")).split("\r\n");
    assert.equal(lines.pop(), "", "CRLF after every line");
    return { header: lines[0]!.split(","), rows: lines.slice(1).map((l) => l.split(",")), name: download.suggestedFilename() };
  }

  const total = (page: Page, id: string): Locator => page.locator(`[data-total="${id}"] .total-value`);
  const number = (n: number, locale = "en-GB") => n.toLocaleString(locale);

  it("shows a manager the customer's month as the raw rows count it, and each chart's CSV holds the query's numbers", async () => {
    const { context, page } = await signedIn(manager);
    const raw = await rawCounts("ACME");
    assert.ok(raw.sent > 100 && raw.received > 20, JSON.stringify(raw));
    assert.equal(await total(page, "sent").textContent(), number(raw.sent));
    assert.equal(await total(page, "received").textContent(), number(raw.received));
    assert.equal(await total(page, "success").textContent(), `${(Math.round((raw.delivered / raw.sent) * 1000) / 10).toFixed(1)}%`);
    await page.getByText("Faxes sent and received by customer ACME (every login).").waitFor();

    const q = await graphql(
      manager,
      `query ($p: DatePeriod!) {
        sent: faxOutSummary(datePeriod: $p, groupBy: [DAY]) { rows { period faxes successRate lineSeconds } }
        received: faxInSummary(datePeriod: $p, groupBy: [DAY]) { rows { period faxes successRate lineSeconds } }
        reasons: faxOutSummary(datePeriod: $p, groupBy: [REASON]) { rows { reason faxes } }
        failing: faxOutFailingDestinations(datePeriod: $p, limit: 10) { number country failedFaxes attempts reasons { reason faxes } }
        countries: faxOutSummary(datePeriod: $p, groupBy: [COUNTRY]) { rows { country faxes delivered } }
      }`,
      { p: PERIOD },
    );
    const sentBy = new Map<string, any>(q.sent.rows.map((r: any) => [r.period, r]));
    const receivedBy = new Map<string, any>(q.received.rows.map((r: any) => [r.period, r]));
    const days = Array.from({ length: 30 }, (_, i) => isoDay(FIRST_DAY + i * DAY));
    const cell = (v: number | null | undefined) => (v === null || v === undefined ? "" : String(v));

    const faxes = await chartCsv(page, "chart-faxes");
    assert.equal(faxes.name, `faxline-faxes-${isoDay(FIRST_DAY)}-${isoDay(today)}.csv`);
    assert.deepEqual(faxes.header, ["period", "sent", "received"]);
    assert.deepEqual(faxes.rows, days.map((d) => [d, cell(sentBy.get(d)?.faxes ?? 0), cell(receivedBy.get(d)?.faxes ?? 0)]), "every day of the range, the days without faxes as 0");
    assert.equal(faxes.rows.reduce((n, r) => n + Number(r[1]), 0), raw.sent);

    const success = await chartCsv(page, "chart-success");
    assert.deepEqual(success.header, ["period", "sentSuccessRate", "receivedSuccessRate"]);
    assert.deepEqual(success.rows, days.map((d) => [d, cell(sentBy.get(d)?.successRate), cell(receivedBy.get(d)?.successRate)]), "rates unrounded, a day without faxes empty");

    const lineTime = await chartCsv(page, "chart-line-time");
    assert.deepEqual(lineTime.header, ["period", "sentLineSeconds", "receivedLineSeconds"]);
    assert.deepEqual(lineTime.rows, days.map((d) => [d, cell(sentBy.get(d)?.lineSeconds ?? 0), cell(receivedBy.get(d)?.lineSeconds ?? 0)]));

    const reasons = await chartCsv(page, "chart-reasons");
    const expectedReasons = q.reasons.rows.filter((r: any) => r.reason).sort((a: any, b: any) => b.faxes - a.faxes);
    assert.deepEqual(reasons.rows, expectedReasons.map((r: any) => [r.reason, String(r.faxes)]));
    assert.equal(reasons.rows.reduce((n, r) => n + Number(r[1]), 0), raw.sent - raw.delivered, "every failed fax has its reason");

    const failing = await chartCsv(page, "chart-failing");
    assert.deepEqual(failing.header, ["number", "failedFaxes", "attempts", "country", "reasons"]);
    assert.deepEqual(failing.rows, q.failing.map((d: any) => [d.number, String(d.failedFaxes), String(d.attempts), d.country, d.reasons.map((x: any) => `${x.reason}:${x.faxes}`).join(";")]));

    const countries = await chartCsv(page, "chart-countries");
    assert.deepEqual(countries.rows, [...q.countries.rows].sort((a: any, b: any) => b.faxes - a.faxes).map((r: any) => [r.country, String(r.faxes), String(r.delivered)]));

    // The underlying table of a chart, with the numbers as the language writes them.
    const chart = page.locator('[data-chart="chart-faxes"]');
    await chart.getByText("Show as table").click();
    const busiest = days.reduce((a, b) => ((sentBy.get(b)?.faxes ?? 0) > (sentBy.get(a)?.faxes ?? 0) ? b : a));
    const row = chart.locator(`tbody tr[data-x="${busiest}"]`);
    assert.equal(await row.locator('td[data-series="sent"]').textContent(), number(sentBy.get(busiest).faxes));
    assert.match((await row.locator("th").textContent()) ?? "", /^\d{1,2} [A-Z][a-z]{2}$/, "a short day label (en-GB)");
    // Bars: one per day with faxes and series.
    assert.equal(await chart.locator('rect.chart-bar[data-series="sent"]').count(), days.filter((d) => (sentBy.get(d)?.faxes ?? 0) > 0).length);
    await expectAccessible(page, "reports page with a table open");
    await context.close();
  });

  it("narrows charts and export links with the filters; the streamed usage records are the query's", async () => {
    const { context, page } = await signedIn(manager);
    await page.getByLabel("Data center").selectOption("DE2");
    await page.getByLabel("Countries").fill("fra, deu");
    await page.getByLabel("Login").fill(plain.login);
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/dc=DE2/);
    const url = new URL(page.url());
    assert.equal(url.searchParams.get("countries"), "fra, deu");
    assert.equal(url.searchParams.get("login"), plain.login);
    const filter = { datacenters: { values: ["DE2"] }, countries: { values: ["FRA", "DEU"] }, logins: { values: [plain.login] } };
    const q = await graphql(manager, `query ($p: DatePeriod!, $f: FaxOutSummaryFilter) { faxOutSummary(datePeriod: $p, filter: $f) { totals { faxes } } }`, { p: PERIOD, f: filter });
    assert.ok(q.faxOutSummary.totals.faxes > 0);
    await total(page, "sent").filter({ hasText: new RegExp(`^${number(q.faxOutSummary.totals.faxes)}$`) }).waitFor();

    // The outbound records export, as the link names it, with the browser's session.
    const href = await page.locator('[data-export="out-records"] a', { hasText: "CSV" }).getAttribute("href");
    assert.match(href!, /^\/reporting\/v1\/ACME\/fax-out\/records\?/);
    const csv = await page.request.get(`${node.url}${href}`);
    assert.equal(csv.status(), 200);
    assert.match(csv.headers()["content-disposition"] ?? "", /attachment; filename="faxline-fax-out-records-ACME-/);
    const lines = (await csv.text()).trimEnd().split("\r\n");
    const header = lines[0]!.split(",");
    const records = await graphql(
      manager,
      `query ($p: DatePeriod!, $f: FaxOutColumnUdrFilters) { faxOutUdrReport(customerId: "ACME", datePeriod: $p, filter: $f, size: 10000) { content { faxId attemptSeqNo calledCountry jobSubmissionDc accountId } hasMoreElements } }`,
      { p: PERIOD, f: { jobSubmissionDc: { values: ["DE2"] }, calledCountry: { values: ["FRA", "DEU"] }, accountId: { values: [plain.login] } } },
    );
    assert.equal(records.faxOutUdrReport.hasMoreElements, false);
    assert.ok(records.faxOutUdrReport.content.length > 0);
    assert.equal(lines.length - 1, records.faxOutUdrReport.content.length, "one line per call of the filtered faxes");
    const col = (name: string) => header.indexOf(name);
    const key = (faxId: string, seq: string) => `${faxId}#${seq}`;
    assert.deepEqual(
      lines.slice(1).map((l) => l.split(",")).map((c) => key(c[col("faxId")]!, c[col("attemptSeqNo")]!)).sort(),
      records.faxOutUdrReport.content.map((r: any) => key(r.faxId, String(r.attemptSeqNo))).sort(),
    );
    const json = await page.request.get(`${node.url}${await page.locator('[data-export="out-records"] a', { hasText: "JSON" }).getAttribute("href")}`);
    assert.equal(((await json.json()) as unknown[]).length, records.faxOutUdrReport.content.length);
    await context.close();
  });

  it("shows a plain login only its own faxes, and an operator any customer", async () => {
    const own = await signedIn(plain);
    const raw = await rawCounts("ACME", plain.login);
    assert.equal(await total(own.page, "sent").textContent(), number(raw.sent));
    assert.equal(await total(own.page, "received").textContent(), number(raw.received), "receptions are the customer's");
    assert.equal(await own.page.getByLabel("Login").count(), 0, "no login filter");
    assert.equal(await own.page.getByLabel("Customer").count(), 0);
    await own.context.close();

    const ops = await signedIn(operator);
    const everyone = (await rawCounts("ACME")).sent + (await rawCounts("GLOBEX")).sent;
    assert.equal(await total(ops.page, "sent").textContent(), number(everyone), "every customer");
    await ops.page.locator('[data-export="out-records"]').getByText("choose a customer above first").waitFor();
    await ops.page.getByLabel("Customer").fill("GLOBEX");
    await ops.page.getByRole("button", { name: "Apply filters" }).click();
    await total(ops.page, "sent").filter({ hasText: new RegExp(`^${number((await rawCounts("GLOBEX")).sent)}$`) }).waitFor();
    assert.match((await ops.page.locator('[data-export="out-records"] a').first().getAttribute("href")) ?? "", /^\/reporting\/v1\/GLOBEX\//);
    await ops.context.close();
  });

  it("speaks German, and says why a range is refused", async () => {
    const { context, page } = await signedIn(manager, "de-DE");
    const raw = await rawCounts("ACME");
    assert.equal(await total(page, "sent").textContent(), number(raw.sent, "de-DE"));
    await page.getByRole("heading", { name: "Summen" }).waitFor();
    await page.locator('[data-chart="chart-faxes"] .chart-title').filter({ hasText: "Gesendete und empfangene Faxe" }).waitFor();
    await page.locator('[data-chart="chart-success"]').getByText("Als Tabelle zeigen").click();
    const rate = await page.locator('[data-chart="chart-success"] td[data-series="sentSuccessRate"]').filter({ hasText: /%/ }).first().textContent();
    assert.match(rate ?? "", /^\d{1,3}(,\d)?\u00a0%$/, "a German percentage (a no-break space before %)");
    await expectAccessible(page, "German reports page");
    // More than the 400 days one summary may span: the node's words, and the charts stay away.
    await page.goto(`${node.url}/console/reports?from=2024-01-01&to=${isoDay(today)}`);
    await page.getByRole("alert").filter({ hasText: /400/ }).waitFor();
    assert.equal(await page.locator('[data-chart="chart-faxes"]').count(), 0);
    await context.close();
  });
});
