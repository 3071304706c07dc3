/**
 * Takes the console screenshots in docs/images/ (README, docs/console.md): starts a node on a
 * throw-away SQLite store, sends a few faxes to test numbers through the API (and more for
 * half a minute, for the Operations page's live charts), seeds a month of history for the
 * Reports page, and photographs each page in headless Chromium.
 *
 *   npm run screenshots            writes docs/images/console-*.png
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogin } from "../src/accounts/accounts.ts";
import { setPushSettings } from "../src/accounts/notification-settings.ts";
import { loadConfig } from "../src/config/load.ts";
import { silentLogger } from "../src/lib/logger.ts";
import { startNode } from "../src/roles/start-node.ts";
import { rollUpPending } from "../src/store/queries/report-rollups.ts";
import { FaxlineConfiguration } from "../packages/client/src/index.ts";
import { launchBrowser } from "../test/support/browser.ts";
import { seedReportHistory } from "../test/support/seed-report-history.ts";

const out = join(import.meta.dirname, "..", "docs", "images");
const dir = mkdtempSync(join(tmpdir(), "faxline-shots-"));
const config = loadConfig({
  env: {},
  overrides: { "store.dataDir": dir, "http.host": "127.0.0.1", "http.port": 0, "testLine.timeScale": "0.02", "scheduler.pollInterval": "50ms", "retry.busy": "2s,2s", "retry.protocol": "2s,2s", "retry.noFax": "2s", "console.chartInterval": "1s", "log.level": "silent" },
});
const node = await startNode(config, silentLogger());
const db = node.context.store.db;
const demo = { custNr: "99999TE", login: "demo", password: "demo-password" };
await createLogin(db, { ...demo, isTest: true, isManager: true }, Date.now());
await createLogin(db, { custNr: "00001OP", login: "operator", password: "operator-password", isTest: true, isAdmin: true }, Date.now());
await setPushSettings(db, demo.custNr, { url: "https://erp.example.com/fax/status", format: "JSON" });

const auth = `Basic ${Buffer.from(`${demo.login}:${demo.password}`).toString("base64")}`;
const letter = Buffer.from("Dear Ms Weber,\n\nplease find the signed contract attached.\n\nKind regards\nAnna Schmidt\n").toString("base64");
const send = async (numbers: string[], reference: string) => {
  const res = await fetch(`${node.url}/rest/v1/${demo.custNr}/fax`, {
    method: "POST",
    headers: { authorization: auth, "content-type": "application/json" },
    body: JSON.stringify({ recipients: numbers.map((number) => ({ number })), documents: [{ name: "contract.txt", data: letter }], reference: { customerDefinedId: reference } }),
  });
  return ((await res.json()) as { jobId: string }).jobId;
};
await send(["+4900000020"], "INV-2026-1041");
await send(["+4900000020", "+4900000021", "+4900000003"], "CONTRACT-7781");
const failed = await send(["+4900000020", "+4900000006"], "ORDER-5512");
await send(["+4900000009"], "INV-2026-1042");
await send(["+4900000008"], "LAB-REPORT-33");
await new Promise((r) => setTimeout(r, 12_000));

// Traffic for the live charts: a few faxes a second for half a minute, then quiet.
for (let i = 0; i < 30; i++) {
  await send(i % 3 === 0 ? ["+4900000020", "+4900000021", "+4900000003"] : ["+4900000020"], `LIVE-${i}`);
  await new Promise((r) => setTimeout(r, 1000));
}
await new Promise((r) => setTimeout(r, 5000));

// Mail to fax for the demo customer, through the configuration API as a manager would set it up.
const configuration = new FaxlineConfiguration({ baseUrl: node.url!, customerNumber: demo.custNr, ...demo });
await configuration.putOutboundSettings({ login: demo.login, fax: { csid: "ACME LOGISTICS" }, reportEmail: { attachFaxImage: "FAILURE_ONLY" } });
await configuration.putOutboundProfile("sales", { fax: { paperFormat: "LETTER", costCenter: "Sales" }, coverSheet: { bodyAs: "COVER_PAGE" } });
await configuration.putOutboundProfile("warehouse", { fax: { resolution: "LOW" }, reportEmail: { onSuccess: false } });
await configuration.putOutboundUser("anna.schmidt@acme.example", { general: { profile: "sales", language: "de" }, pin: "20261129" });
await configuration.putOutboundUser("tom.baker@acme.example", { general: { profile: "warehouse" } });
await configuration.putOutboundDomain("acme.example");

const browser = await launchBrowser();
const shoot = async (login: { login: string; password: string }, pages: [string, string, ((p: import("playwright-core").Page) => Promise<void>)?][]) => {
  const context = await browser.newContext({ locale: "en-GB", viewport: { width: 1280, height: 820 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.goto(`${node.url}/console/`);
  await page.screenshot({ path: join(out, "console-sign-in.png") });
  await page.getByLabel("Login").fill(login.login);
  await page.getByLabel("Password").fill(login.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/console\/jobs$/);
  for (const [path, file, prepare] of pages) {
    await page.goto(`${node.url}/console${path}`);
    await page.getByRole("heading", { level: 1 }).waitFor();
    await page.waitForTimeout(600);
    if (prepare) await prepare(page);
    await page.screenshot({ path: join(out, file), fullPage: true });
    console.log(`wrote docs/images/${file}`);
  }
  await context.close();
};
await shoot(demo, [
  ["/jobs", "console-jobs.png"],
  [`/jobs/${failed}`, "console-job.png", async (p) => void (await p.getByRole("img", { name: "Page 1 of 1" }).first().waitFor())],
  [
    "/send",
    "console-send.png",
    async (p) => {
      await p.locator('input[type="file"]').setInputFiles({ name: "contract.txt", mimeType: "text/plain", buffer: Buffer.from(letter, "base64") });
      await p.getByLabel("Fax number 1").fill("+49 0000 0020");
      await p.getByText("✓ Will dial").waitFor();
      await p.getByRole("button", { name: "Show the pages" }).click();
      await p.getByRole("heading", { name: "What the recipient will receive" }).waitFor();
    },
  ],
  ["/settings", "console-settings.png"],
  ["/mail-to-fax", "console-mail-to-fax.png", async (p) => void (await p.locator('tr[data-user="anna.schmidt@acme.example"]').waitFor())],
]);
await shoot({ login: "operator", password: "operator-password" }, [["/operations", "console-operations.png", async (p) => void (await p.locator('[data-chart="chart-calls"] .chart-box svg').waitFor())]]);
// Then a month of another customer's history for the Reports page (after Operations, whose
// failure lists it would fill).
const DAY = 86_400_000;
const today = Math.floor(Date.now() / DAY) * DAY;
const reports = { custNr: "10042", login: "reports", password: "reports-password" };
await createLogin(db, { ...reports, isTest: false, isManager: true }, Date.now());
await seedReportHistory(db, { customers: [{ custNr: reports.custNr, logins: [reports.login, "anna.schmidt", "billing"], topics: ["front-desk", "orders"] }], faxes: 3000, receptions: 900, firstDay: today - 29 * DAY, days: 30, datacenters: ["DE1", "DE2"] });
while (Object.values(await rollUpPending(db, 1000)).some((n) => n > 0));
await shoot(reports, [["/reports", "console-reports.png", async (p) => void (await p.locator('[data-chart="chart-faxes"] .chart-box svg').waitFor())]]);
await browser.close();
await node.stop();
rmSync(dir, { recursive: true, force: true });
