/**
 * The web console in a real headless Chromium (playwright-core): sign in (a wrong password
 * refused), send a fax from the browser to a test number and watch it reach its final status
 * without a reload, open its page previews, change a setting and see it take effect through the
 * API, redeliver a status push to a real local receiver, the job list updating live, German, and
 * one customer's login never seeing another's jobs. Every page is checked with axe-core (WCAG 2.1
 * A and AA).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { accessibilityViolations, describeViolations, launchBrowser, wordsBrokenAcrossLines } from "../support/browser.ts";
import { PushReceiver } from "../support/push-receiver.ts";
import { inboundNumberState } from "../../src/inbound/inbound-settings.ts";
import { addTopicNumber } from "../../src/inbound/topics.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { api, createTestLogin, eventually, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";

describe("web console in Chromium", () => {
  let node: TestNode;
  let browser: Browser;
  const receiver = new PushReceiver();
  const erin = { custNr: "80001", login: "erin", password: "erin-password" };
  const frank = { custNr: "80002", login: "frank", password: "frank-password" };
  const ops = { custNr: "80009", login: "ops", password: "ops-password" };

  before(async () => {
    await receiver.start();
    // A one-page test call takes about 3 s at this scale: long enough to see it in progress.
    node = await startTestNode({ "testLine.timeScale": "0.1", "push.allowTargets": "127.0.0.1", "console.chartInterval": "500ms" });
    await createTestLogin(node, { ...erin, isManager: true });
    await createTestLogin(node, frank);
    await createTestLogin(node, { ...ops, isAdmin: true });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await node?.stop();
    await receiver.stop();
  });

  async function signedIn(account: { login: string; password: string }, locale = "en-GB"): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ locale, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${node.url}/`);
    await page.getByLabel(locale.startsWith("de") ? "Login" : "Login").fill(account.login);
    await page.getByLabel(locale.startsWith("de") ? "Passwort" : "Password").fill(account.password);
    await page.getByRole("button", { name: locale.startsWith("de") ? "Anmelden" : "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: locale.startsWith("de") ? "Aufträge" : "Jobs" }).waitFor();
    return { context, page };
  }

  async function expectAccessible(page: Page, what: string) {
    const violations = await accessibilityViolations(page);
    assert.deepEqual(violations.map((v) => v.id), [], `${what}:\n${describeViolations(violations)}`);
  }

  it("refuses a wrong password, then signs in and lands on the jobs page", async () => {
    const context = await browser.newContext({ locale: "en-GB" });
    const page = await context.newPage();
    await page.goto(`${node.url}/`);
    assert.equal(new URL(page.url()).pathname, "/console/");
    await page.getByRole("heading", { level: 1, name: "Sign in to Faxline" }).waitFor();
    await expectAccessible(page, "sign-in page");
    await page.getByLabel("Login").fill(erin.login);
    await page.getByLabel("Password").fill("wrong-password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "Wrong login or password" }).waitFor();
    assert.equal(await page.getByLabel("Password").inputValue(), "", "the wrong password is cleared");
    await page.getByLabel("Password").fill(erin.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: "Jobs" }).waitFor();
    assert.equal(new URL(page.url()).pathname, "/console/jobs");
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === "faxline_session");
    assert.ok(session?.httpOnly && session.sameSite === "Strict", "HttpOnly, SameSite=Strict");
    assert.equal(await page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie), "", "scripts cannot read the session");
    await expectAccessible(page, "empty jobs page");
    await context.close();
  });

  it("sends a fax from the browser and shows it reach its final status without a reload, with its pages", async () => {
    const { context, page } = await signedIn(erin);
    await page.getByRole("link", { name: "Send a fax" }).first().click();
    await page.getByRole("heading", { level: 1, name: "Send a fax" }).waitFor();
    await page.locator('input[type="file"][name="documents"]').setInputFiles({ name: "Brief an Kunde (März).txt", mimeType: "text/plain", buffer: Buffer.from("Sehr geehrte Damen und Herren,\n\nanbei die Unterlagen.\n") });
    const number = page.getByLabel("Fax number 1");
    await number.fill("12ab");
    await page.getByText(/✗ .*letters|✗ .*digits/i).waitFor();
    assert.equal(await number.getAttribute("aria-invalid"), "true");
    await number.fill("+49 0000 0020");
    await page.getByText("✓ Will dial +4900000020").waitFor();
    await page.getByLabel("Black and white").selectOption("PHOTO");
    await expectAccessible(page, "send page");

    await page.getByRole("button", { name: "Show the pages" }).click();
    await page.getByRole("heading", { name: "What the recipient will receive" }).waitFor();
    const previewWidth = await page.locator("#send-preview ~ * img, section[aria-labelledby=send-preview] img").first().evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth);
    assert.ok(previewWidth > 500, `a rendered page (${previewWidth} px wide)`);

    await page.getByRole("button", { name: "Send fax" }).click();
    await page.waitForURL(/\/console\/jobs\/FJ[A-Z0-9]+$/);
    const jobId = decodeURIComponent(page.url().split("/").pop()!);
    await page.getByRole("heading", { level: 1, name: `Job ${jobId}` }).waitFor();
    await page.evaluate(() => ((globalThis as unknown as { stillTheSamePage: boolean }).stillTheSamePage = true));
    const badge = page.locator('[data-recipient="+49 0000 0020"] .badge');
    assert.equal(await badge.getAttribute("data-status"), "PENDING", "in progress when the page opens");
    await page.locator('[data-recipient="+49 0000 0020"] .badge[data-status="OK"]').waitFor({ timeout: 30_000 });
    assert.equal(await page.evaluate(() => (globalThis as unknown as { stillTheSamePage?: boolean }).stillTheSamePage), true, "no reload");
    await page.getByTestId("job-state").filter({ hasText: "Completed" }).waitFor();
    assert.equal(await page.getByTestId("job-tone-mode").textContent(), "Photo (screened)", "the tone mode chosen in the form");
    await page.getByRole("cell", { name: /TEST/ }).first().waitFor();

    // The pages as previews, and the downloads.
    const pageImage = page.getByRole("img", { name: "Page 1 of 1" });
    await pageImage.waitFor();
    await eventually(async () => ((await pageImage.evaluate((img) => { const i = img as unknown as { complete: boolean; naturalWidth: number }; return i.complete ? i.naturalWidth : 0; })) > 0 ? true : undefined), 10_000, "the page preview");
    const shownWidth = await pageImage.evaluate((img) => (img as unknown as { clientWidth: number }).clientWidth);
    assert.ok(shownWidth >= 400, `the page preview is shown large enough to read (${shownWidth} px wide)`);
    const pdfHref = await page.getByRole("link", { name: "Download PDF" }).getAttribute("href");
    const pdf = await page.request.get(`${node.url}${pdfHref}`);
    assert.equal(pdf.headers()["content-type"], "application/pdf");
    await expectAccessible(page, "job page");

    const report = await api(node.url, erin).get(`/${erin.custNr}/fax/reports/${jobId}`);
    assert.equal(report.body.recipientStatus[0].status, "OK", "the API agrees");
    await context.close();
  });

  it("changes the push URL in Settings, which the API then uses; a push is redelivered from the job page", async () => {
    const { context, page } = await signedIn(erin);
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByRole("heading", { level: 1, name: "Settings" }).waitFor();
    // The browser itself refuses what is no URL at all; the node refuses what it cannot push to.
    await page.getByLabel("Push URL").fill("ftp://files.example.com/status");
    await page.locator("#settings-push ~ form").getByRole("button", { name: "Save" }).click();
    await page.getByRole("alert").filter({ hasText: "must be an http:// or https:// URL" }).waitFor();
    await page.getByLabel("Push URL").fill(receiver.url("/erin"));
    await page.locator('select[name="pushFormat"]').selectOption("JSON");
    await page.locator("#settings-push ~ form").getByRole("button", { name: "Save" }).click();
    await page.locator("#settings-push ~ form").getByRole("status").filter({ hasText: "Saved." }).waitFor();
    await expectAccessible(page, "settings page");

    // The account's default black and white: saved, read back, and removed again ("Automatic").
    const toneForm = page.locator("#settings-tone-mode ~ form");
    const savedToneMode = () => page.evaluate(() => fetch("/console/api/settings").then((r) => r.json() as Promise<{ defaultToneMode: string | null }>).then((s) => s.defaultToneMode));
    await page.locator('select[name="defaultToneMode"]').selectOption("PHOTO");
    await toneForm.getByRole("button", { name: "Save" }).click();
    await toneForm.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    assert.equal(await savedToneMode(), "PHOTO");
    assert.equal(await page.locator('select[name="defaultToneMode"]').inputValue(), "PHOTO", "shown after saving");
    await page.locator('select[name="defaultToneMode"]').selectOption("");
    await toneForm.getByRole("button", { name: "Save" }).click();
    // ("Saved." is still shown from the first save: wait for the store instead.)
    await eventually(async () => ((await savedToneMode()) === null ? true : undefined), 10_000, "the default tone mode removed");

    // Through the API: a job that names no push URL is pushed to the one just set, as JSON.
    const client = api(node.url, erin);
    const job = await client.post(`/${erin.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
    await waitForFinalReport(client, erin.custNr, job.body.jobId, 30_000);
    const first = await eventually(async () => receiver.received("/erin")[0], 15_000, "the first push");
    assert.equal(JSON.parse(first.body).jobId ?? JSON.parse(first.body).data?.jobId, job.body.jobId);

    await page.goto(`${node.url}/console/jobs/${job.body.jobId}`);
    const entry = page.locator("[data-notification]").first();
    await entry.waitFor();
    await page.locator('[data-notification][data-state="delivered"]').first().waitFor();
    await entry.getByRole("button", { name: "Deliver again" }).click();
    await page.getByRole("status").filter({ hasText: "Queued for delivery again." }).waitFor();
    await eventually(async () => (receiver.received("/erin").length >= 2 ? true : undefined), 15_000, "the redelivered push");
    assert.equal(receiver.received("/erin")[1]!.headers["webhook-id"], first.headers["webhook-id"], "the same message, delivered again");
    await context.close();
  });

  it("adds a job sent through the API to the open jobs list without a reload", async () => {
    const { context, page } = await signedIn(erin);
    await page.evaluate(() => ((globalThis as unknown as { stillTheSamePage: boolean }).stillTheSamePage = true));
    await page.locator('.live[data-live="on"]').waitFor();
    const job = await api(node.url, erin).post(`/${erin.custNr}/fax`, { recipients: [{ number: "+4900000009" }], documents: [TEXT_DOC], reference: { customerDefinedId: "live-row" } });
    const row = page.locator(`tr[data-job-id="${job.body.jobId}"]`);
    await row.waitFor({ timeout: 15_000 });
    await row.locator('.badge[data-status="WRONG_NUMBER"]').waitFor({ timeout: 30_000 });
    assert.equal(await page.evaluate(() => (globalThis as unknown as { stillTheSamePage?: boolean }).stillTheSamePage), true, "no reload");
    // Filters: failed jobs only, by the reference.
    await page.getByLabel("Status").selectOption("failed");
    await page.getByLabel("Reference").fill("live-row");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await eventually(async () => ((await page.locator("tr[data-job-id]").count()) === 1 ? true : undefined), 10_000, "one filtered row");
    assert.equal(await page.locator("tr[data-job-id]").getAttribute("data-job-id"), job.body.jobId);
    await expectAccessible(page, "jobs page with rows");
    await context.close();
  });

  it("never shows one customer's jobs to another customer's login", async () => {
    const erinJob = await api(node.url, erin).post(`/${erin.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
    const { context, page } = await signedIn(frank);
    await page.getByText("No jobs match").waitFor();
    assert.equal(await page.locator(`tr[data-job-id="${erinJob.body.jobId}"]`).count(), 0);
    await page.goto(`${node.url}/console/jobs/${erinJob.body.jobId}`);
    await page.getByRole("alert").filter({ hasText: `You have no job ${erinJob.body.jobId}` }).waitFor();
    assert.equal(await page.getByRole("link", { name: "Operations" }).count(), 0, "no Operations for a customer login");
    // Frank does not manage his account: its settings are shown, not changeable.
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByText("Only a login that manages the account can change its settings").waitFor();
    assert.equal(await page.getByLabel("Push URL").isDisabled(), true);
    assert.equal(await page.getByLabel("Current password").isDisabled(), false, "his own password he can change");
    await context.close();
  });

  it("sets up a topic and number in Settings, and shows a fax received on it with its pages", async () => {
    const { context, page } = await signedIn(erin);
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByLabel("New topic").fill("front-desk");
    await page.getByRole("button", { name: "Create topic" }).click();
    const topic = page.locator('[data-topic="front-desk"]');
    await topic.waitFor();
    // Numbers are the operator's to assign (faxline inbound number add); the page shows them.
    await addTopicNumber(node.node.context.store.db, { custNr: erin.custNr, topic: "front-desk", number: "+49 30 9876 5430" }, REGION_NUMBER_CONTEXT.DE, Date.now());
    await page.reload();
    await page.locator('[data-topic="front-desk"]').getByText("+493098765430").waitFor();
    await page.locator('[data-topic="front-desk"]').getByLabel("Mail each fax to (addresses, comma-separated)").fill("desk@example.com");
    await page.locator('[data-topic="front-desk"]').getByRole("button", { name: "Save" }).click();
    await page.locator('[data-topic="front-desk"]').getByRole("status").filter({ hasText: "Saved." }).waitFor();
    // Fax-to-SFTP with a key made for it: the page then shows its public key to authorise.
    // (192.0.2.7 is a documentation address: the delivery is refused without any traffic.)
    const sftp = page.locator('[data-sftp="front-desk"]');
    await sftp.getByLabel("Server (host name or address)").fill("192.0.2.7");
    await sftp.getByLabel("User name").fill("fax");
    await sftp.getByLabel("Server's host key fingerprints (SHA256:…, one per line)").fill(`SHA256:${"A".repeat(43)}`);
    assert.equal(await sftp.getByLabel("Make a new key for this delivery").isChecked(), true);
    await sftp.getByRole("button", { name: "Set SFTP delivery" }).click();
    const publicKey = sftp.getByLabel("Public key: add this line to the user's authorized_keys on the server");
    await publicKey.waitFor();
    assert.match(await publicKey.inputValue(), /^ssh-ed25519 AAAA\S+$/);
    assert.match((await sftp.textContent()) ?? "", /sftp:\/\/fax@192\.0\.2\.7:22\//);
    await expectAccessible(page, "settings page with a topic");
    // The page changed them through the configuration API: each change is in its audit log.
    const audit = await node.node.context.store.db.selectFrom("config_audit").select(["actor_login", "resource", "resource_key", "action", "after_json"]).where("cust_nr", "=", erin.custNr).orderBy("at").orderBy("id").execute();
    assert.deepEqual(
      audit.map((a) => [a.actor_login, a.resource, a.resource_key, a.action]),
      [
        [erin.login, "inbound/profiles", "front-desk", "create"],
        [erin.login, "inbound/profiles", "front-desk", "update"],
        [erin.login, "inbound/profiles", "front-desk", "update"],
      ],
    );
    assert.match(audit[2]!.after_json ?? "", /"ftpCredentials":"\(set\)"/);
    // Creating a topic of a name in use replaces nothing.
    await page.getByLabel("New topic").fill("front-desk");
    await page.getByRole("button", { name: "Create topic" }).click();
    await page.getByText('has a profile "front-desk" already').waitFor();
    assert.equal(await page.locator('[data-topic="front-desk"]').getByLabel("Mail each fax to (addresses, comma-separated)").inputValue(), "desk@example.com");
    // The number's own settings, through the configuration API: inactive, it answers no call.
    const numberRow = page.locator('[data-number="+493098765430"]');
    assert.equal(await numberRow.getByLabel("Topic of +493098765430").inputValue(), "front-desk");
    await numberRow.getByLabel("Fax id of +493098765430").fill("ERIN DESK");
    await numberRow.getByLabel("+493098765430 answers calls").uncheck();
    await numberRow.getByRole("button", { name: "Save +493098765430" }).click();
    await numberRow.getByText("+493098765430 saved.").waitFor();
    const db = node.node.context.store.db;
    assert.deepEqual(await inboundNumberState(db, "+493098765430"), { state: "inactive", custNr: erin.custNr, topic: "front-desk", inactiveAt: "number" });
    await expectAccessible(page, "settings page with a topic and its numbers");
    await numberRow.getByLabel("+493098765430 answers calls").check();
    await numberRow.getByRole("button", { name: "Save +493098765430" }).click();
    await eventually(async () => ((await inboundNumberState(db, "+493098765430")).state === "active" ? true : undefined), 10_000, "the number active again");
    assert.deepEqual(await inboundNumberState(db, "+493098765430"), { state: "active", custNr: erin.custNr, topic: "front-desk", faxId: "ERIN DESK", costCenter: null });
    // Paused: callers are asked to try again later (480); unpaused, it answers again.
    await numberRow.getByLabel("+493098765430 is paused (callers are asked to try again later)").check();
    await numberRow.getByRole("button", { name: "Save +493098765430" }).click();
    await eventually(async () => ((await inboundNumberState(db, "+493098765430")).state === "paused" ? true : undefined), 10_000, "the number paused");
    await numberRow.getByLabel("+493098765430 is paused (callers are asked to try again later)").uncheck();
    await numberRow.getByRole("button", { name: "Save +493098765430" }).click();
    await eventually(async () => ((await inboundNumberState(db, "+493098765430")).state === "active" ? true : undefined), 10_000, "the number answering again");

    // The test account faxes its own number: the fax arrives on the topic.
    const client = api(node.url, erin);
    const sent = await client.post(`/${erin.custNr}/fax`, { recipients: [{ number: "+493098765430" }], documents: [TEXT_DOC] });
    await waitForFinalReport(client, erin.custNr, sent.body.jobId, 30_000);
    // The reception is stored right after the call's outcome.
    await eventually(
      async () => ((await node.node.context.store.db.selectFrom("received_faxes").select("id").where("source_job_id", "=", sent.body.jobId).executeTakeFirst()) ? true : undefined),
      10_000,
      "the reception",
    );
    await page.getByRole("link", { name: "Received" }).click();
    await page.getByRole("heading", { level: 1, name: "Received faxes" }).waitFor();
    const row = page.locator("tr[data-received-id]").first();
    await row.waitFor();
    assert.match((await row.textContent()) ?? "", /\+493098765430.*front-desk/);
    await expectAccessible(page, "received list");
    await row.getByRole("link").click();
    const image = page.getByRole("img", { name: "Page 1 of 1" });
    await image.waitFor();
    await eventually(async () => ((await image.evaluate((img) => { const i = img as unknown as { complete: boolean; naturalWidth: number }; return i.complete ? i.naturalWidth : 0; })) > 0 ? true : undefined), 10_000, "the received page");
    const pdf = await page.request.get(`${node.url}${await page.getByRole("link", { name: "Download PDF" }).getAttribute("href")}`);
    assert.equal(pdf.headers()["content-type"], "application/pdf");
    // No SMTP server is set up here: the mail fails for good, is shown, and can be sent again.
    const delivery = page.locator("[data-notification]").filter({ hasText: "desk@example.com" });
    await delivery.waitFor();
    // The SFTP delivery is refused at once (a documentation address), with its reason.
    const sftpDelivery = page.locator('[data-notification][data-state="failed"]').filter({ hasText: "SFTP" });
    await sftpDelivery.waitFor();
    assert.match((await sftpDelivery.textContent()) ?? "", /sftp:\/\/fax@192\.0\.2\.7:22\/.*Refusing to connect to the SFTP server 192\.0\.2\.7:22: 192\.0\.2\.7 is a documentation address/);
    await expectAccessible(page, "received fax page");
    await context.close();
  });

  it("draws the Operations page's live charts and updates them as a call runs, with their tables and CSV", async () => {
    const { context, page } = await signedIn(ops);
    await page.getByRole("link", { name: "Operations" }).click();
    await page.getByRole("heading", { level: 2, name: "Live charts" }).waitFor();
    const nodeId = node.node.context.nodeId;
    const dc = node.config.node.datacenter;
    const calls = page.locator('[data-chart="chart-calls"]');
    await calls.locator(".chart-box svg").waitFor();
    await page.locator(`[data-chart="chart-queue-${dc}"] .chart-box svg`).waitFor();
    const points = async () => Number(await calls.getAttribute("data-points"));
    const before = await points();
    const latest = (chart: string, series: string) => page.locator(`[data-chart="${chart}"] .chart-legend li[data-series="${series}"] .chart-legend-value`);

    const job = await api(node.url, erin).post(`/${erin.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [TEXT_DOC] });
    // While the call runs: the node's line and the data center's "in a call" line stand at 1.
    await latest("chart-calls", `calls_${nodeId}`).filter({ hasText: /^1$/ }).waitFor({ timeout: 20_000 });
    await latest(`chart-queue-${dc}`, "inCall").filter({ hasText: /^1$/ }).waitFor({ timeout: 10_000 });
    await waitForFinalReport(api(node.url, erin), erin.custNr, job.body.jobId, 30_000);
    await latest("chart-calls", `calls_${nodeId}`).filter({ hasText: /^0$/ }).waitFor({ timeout: 10_000 });
    assert.ok((await points()) > before, "new samples were drawn without a reload");
    const drawn = await calls.locator(`path[data-series="calls_${nodeId}"]`).getAttribute("d");
    assert.match(drawn ?? "", /^M[\d.]+,[\d.]+(L[\d.]+,[\d.]+)+$/, "a line through the samples");

    // The render of that job is a dot with its time; the table says what the dot says.
    const render = page.locator('[data-chart="chart-render"]');
    await render.locator("circle.chart-dot").first().waitFor();
    await render.getByText("Show as table").click();
    const renderRow = render.locator("tbody tr").last();
    assert.match((await renderRow.locator('td[data-series="renderMeanSeconds"]').textContent()) ?? "", /^\d+\.\d+ s$/);

    // The calls chart's CSV holds the samples of its table: the 1 of the call among them.
    await calls.getByText("Show as table").click();
    const [download] = await Promise.all([page.waitForEvent("download"), calls.getByRole("button", { name: "Download CSV" }).click()]);
    assert.match(download.suggestedFilename(), /^faxline-calls-\d{8}-\d{4}\.csv$/);
    const csv = (await readFile((await download.path())!, "utf8")).trimEnd().split("\r\n");
    assert.equal(csv[0], `time,calls_${nodeId},receiving_${nodeId}`);
    const rows = csv.slice(1).map((line) => line.split(","));
    assert.ok(rows.every((r) => !Number.isNaN(Date.parse(r[0]!))), "ISO times");
    assert.ok(rows.some((r) => r[1] === "1"), "the call in the CSV");
    // The page goes on taking samples while the file is made: compare the times both hold.
    const table = new Map(
      await calls.locator("tbody tr").evaluateAll((trs) =>
        trs.map((tr) => [(tr as unknown as { dataset: { x: string } }).dataset.x, (tr as unknown as { querySelector(s: string): { textContent: string } }).querySelector("td").textContent] as [string, string]),
      ),
    );
    const both = rows.filter((r) => table.has(r[0]!));
    assert.ok(both.length >= rows.length - 3 && both.length >= 5, `the CSV holds the table's samples (${both.length} of ${rows.length} in both)`);
    for (const r of both) assert.equal(table.get(r[0]!), r[1], `the calls at ${r[0]}`);
    await expectAccessible(page, "operations page with charts and tables open");
    await context.close();
  });

  it("speaks German, and shows an operator the Operations page", async () => {
    const { context, page } = await signedIn(ops, "de-DE");
    assert.equal(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { lang: string } } }).document.documentElement.lang), "de");
    await page.getByRole("link", { name: "Betrieb" }).click();
    await page.getByRole("heading", { level: 1, name: "Betrieb" }).waitFor();
    await page.getByRole("heading", { name: "Knoten" }).waitFor();
    await page.locator(`[data-node]`).first().waitFor();
    await page.getByRole("heading", { name: "Fehlergründe der letzten Stunde" }).waitFor();
    await page.locator('[data-chart="chart-calls"] .chart-title').filter({ hasText: "Anrufe im Verlauf" }).waitFor();
    // Numbers the German way: the render times of the jobs sent before, "0,44 s".
    const renderLegend = page.locator('[data-chart="chart-render"] .chart-legend-value').first();
    await renderLegend.waitFor();
    assert.match((await renderLegend.textContent()) ?? "", /^\d+,\d+ s$/);
    await expectAccessible(page, "operations page");
    // Headers and numbers are never broken inside a word ("AN ZAHL", "12 3"), on a wide screen
    // or a narrow one (where the two-column cards are narrowest).
    for (const width of [1280, 900, 700]) {
      await page.setViewportSize({ width, height: 900 });
      assert.deepEqual(await wordsBrokenAcrossLines(page, "th, td.num"), [], `Operations at ${width} px`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByLabel("Sprache").selectOption("en");
    await page.getByRole("heading", { level: 1, name: "Operations" }).waitFor();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { level: 1, name: "Sign in to Faxline" }).waitFor();
    const after = await page.request.get(`${node.url}/console/api/session`);
    assert.equal(after.status(), 401, "signed out on the server too");
    await context.close();
  });
});
