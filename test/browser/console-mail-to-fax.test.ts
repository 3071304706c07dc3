/**
 * The console's Mail to fax page in a real headless Chromium: a manager sets the customer's
 * booking login, creates a profile, a user with that profile and a PIN, and an allowed domain;
 * edits and deletes them; each change is in the configuration API (read back with
 * @faxline/client over HTTP Basic) and in the page's audit log; a refusal of the API names and
 * focuses its field; the PIN never appears in the page; another customer's manager sees none
 * of it, a plain login has no such page, an operator names the customer (an unknown one is
 * one message) and pages through its profiles; German; axe-core clean throughout; after a
 * delete the focus stays in the section.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { FaxlineConfiguration } from "../../packages/client/src/index.ts";
import { accessibilityViolations, describeViolations, launchBrowser } from "../support/browser.ts";
import { createTestLogin, eventually, startTestNode, type TestNode } from "../support/test-node.ts";

const USER_PIN = "48151623";
const DOMAIN_PIN = "97531864";

describe("the console's Mail to fax page in Chromium", () => {
  let node: TestNode;
  let browser: Browser;
  const boss = { custNr: "81001", login: "acme-boss", password: "acme-boss-password" };
  const clerk = { custNr: "81001", login: "acme-clerk", password: "acme-clerk-password" };
  const globex = { custNr: "81002", login: "globex-boss", password: "globex-boss-password" };
  const ops = { custNr: "81009", login: "ops", password: "ops-password" };
  const apiAs = (creds: { custNr: string; login: string; password: string }, custNr = creds.custNr) => new FaxlineConfiguration({ baseUrl: node.url, customerNumber: custNr, login: creds.login, password: creds.password });

  before(async () => {
    node = await startTestNode({ "node.roles": "api" });
    await createTestLogin(node, { ...boss, isManager: true });
    await createTestLogin(node, clerk);
    await createTestLogin(node, { ...globex, isManager: true });
    await createTestLogin(node, { ...ops, isAdmin: true });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await node?.stop();
  });

  async function openPage(account: { login: string; password: string }, locale = "en-GB"): Promise<{ context: BrowserContext; page: Page }> {
    const de = locale.startsWith("de");
    const context = await browser.newContext({ locale, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${node.url}/`);
    await page.getByLabel("Login").fill(account.login);
    await page.getByLabel(de ? "Passwort" : "Password").fill(account.password);
    await page.getByRole("button", { name: de ? "Anmelden" : "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: de ? "Aufträge" : "Jobs" }).waitFor();
    await page.getByRole("link", { name: de ? "Mail-to-Fax" : "Mail to fax" }).click();
    await page.getByRole("heading", { level: 1, name: de ? "Mail-to-Fax" : "Mail to fax" }).waitFor();
    await page.locator('[data-section="settings"] form').waitFor();
    return { context, page };
  }

  async function expectAccessible(page: Page, what: string) {
    const violations = await accessibilityViolations(page);
    assert.deepEqual(violations.map((v) => v.id), [], `${what}:\n${describeViolations(violations)}`);
  }

  /** The refusal shown in `form`: its text, and the field it marks is invalid, described by it, and focused. */
  async function expectRefusal(form: Locator, field: string, text: RegExp | string) {
    const alert = form.getByRole("alert");
    await alert.filter({ hasText: text }).waitFor();
    const input = form.locator(`[name="${field}"]`);
    assert.equal(await input.getAttribute("aria-invalid"), "true", `${field} is marked invalid`);
    const alertId = await alert.getAttribute("id");
    assert.ok((await input.getAttribute("aria-describedby"))?.split(" ").includes(alertId!), `${field} is described by the refusal`);
    await eventually(async () => ((await isFocused(input)) ? true : undefined), 5_000, `${field} focused`);
  }

  const isFocused = (target: Locator) => target.evaluate((el) => (el as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement === el);

  /** Neither PIN is anywhere in the page: not in its markup, nor in the value of any field. */
  async function expectNoPin(page: Page, when: string) {
    const html = await page.content();
    const values = await page.locator("input, textarea").evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value));
    for (const pin of [USER_PIN, DOMAIN_PIN]) {
      assert.ok(!html.includes(pin), `${when}: the PIN is not in the page`);
      assert.ok(!values.includes(pin), `${when}: the PIN is in no field`);
    }
  }

  it("lets a manager set up mail-to-fax: booking login, a profile, a user with that profile and a PIN, a domain; edit; delete; all in the audit log", async () => {
    const { context, page } = await openPage(boss);
    const api = apiAs(boss);
    await page.getByText("Mail to fax is not set up for this customer").waitFor();
    await expectAccessible(page, "the empty page");

    // The customer's level: a login of another customer is refused, naming the field.
    const settings = page.locator('[data-form="m2f-settings-form"]');
    await settings.locator('[name="login"]').fill("globex-boss");
    await settings.locator('[name="fax.csid"]').fill("ACME MAIL");
    await settings.getByRole("button", { name: "Save" }).click();
    await expectRefusal(settings, "login", /Login the jobs are booked on: login "globex-boss" is not a login of customer 81001/);
    await settings.locator('[name="login"]').fill(clerk.login);
    await settings.getByRole("button", { name: "Save" }).click();
    await page.locator('[data-section="settings"]').getByRole("status").filter({ hasText: "Customer settings saved." }).waitFor();
    assert.equal(await page.getByText("Mail to fax is not set up").count(), 0);
    const customer = await api.getOutboundSettings();
    assert.equal(customer.login, clerk.login);
    assert.equal(customer.fax?.csid, "ACME MAIL");

    // A profile: a wrong value is the API's refusal, at its field; the form shows what is inherited.
    await page.getByRole("button", { name: "New profile" }).click();
    const profileForm = page.locator('[data-form="m2f-profile-form"]');
    await eventually(async () => ((await isFocused(page.getByRole("heading", { level: 3, name: "New profile" }))) ? true : undefined), 5_000, "the form's heading focused");
    await profileForm.getByText("Inherited (ACME MAIL)").waitFor();
    await profileForm.locator('[name="name"]').fill("sales");
    await profileForm.getByLabel("Paper").selectOption("LETTER");
    await profileForm.getByLabel("Remove this prefix from numbers").fill("abc");
    await profileForm.getByRole("button", { name: "Save" }).click();
    await expectRefusal(profileForm, "dialing.removePrefix", /Remove this prefix from numbers: dialing\.removePrefix must be up to 4 digits/);
    await expectAccessible(page, "the profile form with a refusal");
    await profileForm.getByLabel("Remove this prefix from numbers").fill("0");
    await profileForm.getByRole("button", { name: "Save" }).click();
    await page.locator('[data-section="profiles"]').getByRole("status").filter({ hasText: "sales saved." }).waitFor();
    await page.locator('tr[data-profile="sales"]').waitFor();
    const sales = await api.getOutboundProfile("sales");
    assert.deepEqual([sales.fax?.paperFormat, sales.dialing?.removePrefix, sales.fax?.csid], ["LETTER", "0", undefined], "set what was chosen; the CSID stays inherited");

    // A user with that profile and a PIN.
    await page.getByRole("button", { name: "New user" }).click();
    const userForm = page.locator('[data-form="m2f-user-form"]');
    await userForm.locator('[name="email"]').fill("Alice@Example.org");
    await userForm.getByLabel("Profile").selectOption("sales");
    await userForm.locator("#m2f-user-form-dialing-removePrefix-hint").filter({ hasText: "Inherited (0)" }).waitFor();
    await userForm.getByLabel("New PIN").fill("12");
    await userForm.getByRole("button", { name: "Save" }).click();
    await expectRefusal(userForm, "pin", /PIN: pin must be 6 to 12 digits/);
    assert.equal(await userForm.getByLabel("New PIN").inputValue(), "", "a refused PIN is not kept in the page either");
    await userForm.getByLabel("New PIN").fill(USER_PIN);
    await userForm.getByLabel("Report language").selectOption("de");
    await expectAccessible(page, "the user form");
    await userForm.getByRole("button", { name: "Save" }).click();
    await page.locator('[data-section="users"]').getByRole("status").filter({ hasText: "alice@example.org saved." }).waitFor();
    const aliceRow = page.locator('tr[data-user="alice@example.org"]');
    await aliceRow.waitFor();
    assert.deepEqual(await aliceRow.locator("td").allTextContents().then((c) => c.slice(0, 3)), ["alice@example.org", "sales", "Yes"]);
    const alice = await api.getOutboundUser("alice@example.org");
    assert.deepEqual([alice.general?.profile, alice.general?.language, alice.hasPin], ["sales", "de", true]);
    await page.locator('tr[data-profile="sales"] td.num').filter({ hasText: "1" }).waitFor();
    await expectNoPin(page, "after the user was saved");

    // A domain with a PIN.
    const domainForm = page.locator('[data-form="m2f-domain-form"]');
    await domainForm.getByLabel("Domain", { exact: true }).fill("not a domain");
    await domainForm.getByRole("button", { name: "Allow domain" }).click();
    await expectRefusal(domainForm, "domain", /Domain: "not a domain" is not a domain name/);
    await domainForm.getByLabel("Domain", { exact: true }).fill("Example.NET");
    await domainForm.getByLabel("PIN (optional)").fill(DOMAIN_PIN);
    await domainForm.getByRole("button", { name: "Allow domain" }).click();
    const domainRow = page.locator('tr[data-domain="example.net"]');
    await domainRow.waitFor();
    assert.equal(await domainRow.locator("td").nth(1).textContent(), "Yes");
    assert.deepEqual(await api.listOutboundDomains(), [{ domain: "example.net", hasPin: true }]);
    await expectNoPin(page, "after the domain was saved");

    // Edit the user (its PIN stays unless changed) and the profile.
    await aliceRow.getByRole("button", { name: "Edit alice@example.org" }).click();
    await userForm.getByRole("heading", { name: "User alice@example.org" }).waitFor();
    await userForm.getByText("Has a PIN.").waitFor();
    assert.equal(await userForm.getByLabel("Report language").inputValue(), "de", "the user's own values in the form");
    await userForm.locator('[name="fax.csid"]').fill("ALICE");
    await userForm.getByRole("button", { name: "Save" }).click();
    await page.locator('[data-section="users"]').getByRole("status").filter({ hasText: "alice@example.org saved." }).waitFor();
    await eventually(async () => ((await api.getOutboundUser("alice@example.org")).fax?.csid === "ALICE" ? true : undefined), 5_000, "the user's CSID");
    assert.equal((await api.getOutboundUser("alice@example.org")).hasPin, true, "the PIN kept");
    await page.locator('tr[data-profile="sales"]').getByRole("button", { name: "Edit sales" }).click();
    await profileForm.getByLabel("Resolution").selectOption("LOW");
    await profileForm.getByRole("button", { name: "Save" }).click();
    await page.locator('[data-section="profiles"]').getByRole("status").filter({ hasText: "sales saved." }).waitFor();
    await eventually(async () => ((await api.getOutboundProfile("sales")).fax?.resolution === "LOW" ? true : undefined), 5_000, "the profile's resolution");
    assert.equal((await api.getOutboundProfile("sales")).fax?.paperFormat, "LETTER", "the rest of the profile kept");

    // A profile that a user has is not deleted: the API's reason is shown.
    await page.locator('tr[data-profile="sales"]').getByRole("button", { name: "Delete sales" }).click();
    await page.locator('tr[data-profile="sales"]').getByRole("button", { name: "Yes, delete" }).click();
    await page.locator('[data-section="profiles"]').getByRole("status").filter({ hasText: '1 user has the profile "sales"' }).waitFor();

    // Delete the user, then the profile, then the domain.
    await aliceRow.getByRole("button", { name: "Delete alice@example.org" }).click();
    await aliceRow.getByRole("button", { name: "Yes, delete" }).click();
    await page.locator('[data-section="users"]').getByRole("status").filter({ hasText: "alice@example.org deleted." }).waitFor();
    await eventually(async () => ((await aliceRow.count()) === 0 ? true : undefined), 5_000, "the user's row gone");
    assert.equal(await isFocused(page.getByRole("heading", { level: 2, name: "Users" })), true, "the focus stays in the section");
    await page.locator('tr[data-profile="sales"]').getByRole("button", { name: "Delete sales" }).click();
    await page.locator('tr[data-profile="sales"]').getByRole("button", { name: "Yes, delete" }).click();
    await page.locator('[data-section="profiles"]').getByText("No profiles yet.").waitFor();
    await domainRow.getByRole("button", { name: "Delete example.net" }).click();
    await domainRow.getByRole("button", { name: "Yes, delete" }).click();
    await page.locator('[data-section="domains"]').getByText("No domains allowed.").waitFor();
    assert.deepEqual([await api.listOutboundUsers(), await api.listOutboundProfiles(), await api.listOutboundDomains()], [[], [], []]);

    // The audit log: every change, newest first, by whom; the PINs only as "(set)".
    const audit = page.locator('[data-section="audit"]');
    const row = (resource: string, key: string, action: string) => audit.locator(`tr[data-resource="${resource}"][data-key="${key}"][data-action="${action}"]`);
    for (const [resource, key, action] of [
      ["outbound/settings", "", "create"],
      ["outbound/profiles", "sales", "create"],
      ["outbound/profiles", "sales", "update"],
      ["outbound/profiles", "sales", "delete"],
      ["outbound/users", "alice@example.org", "create"],
      ["outbound/users", "alice@example.org", "update"],
      ["outbound/users", "alice@example.org", "delete"],
      ["outbound/domains", "example.net", "create"],
      ["outbound/domains", "example.net", "delete"],
    ] as const) {
      await row(resource, key, action).waitFor();
    }
    assert.equal(await audit.locator("tr[data-audit]").count(), 9, "the refused changes wrote nothing");
    const created = row("outbound/users", "alice@example.org", "create");
    assert.match((await created.textContent())!, /acme-boss \(manager\)/);
    assert.match((await created.textContent())!, /pin: – → \(set\)/);
    assert.match((await row("outbound/users", "alice@example.org", "update").textContent())!, /fax\.csid: – → ALICE/);
    assert.match((await row("outbound/profiles", "sales", "update").textContent())!, /fax\.resolution: – → LOW/);
    const shownIds = await audit.locator("tr[data-audit]").evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { audit: string } }).dataset.audit));
    const fromApi = (await api.audit({ limit: 20 })).entries.map((e) => e.id);
    assert.deepEqual(shownIds, fromApi, "the API's entries, in its order (newest first)");
    await expectNoPin(page, "with the audit log");
    await expectAccessible(page, "the page with its audit log");

    // Narrowed to one resource.
    await audit.getByLabel("Show").selectOption("outbound/users");
    await eventually(async () => ((await audit.locator("tr[data-audit]").count()) === 3 ? true : undefined), 5_000, "three user entries");
    assert.deepEqual(await audit.locator("tr[data-audit]").evaluateAll((rows) => [...new Set(rows.map((r) => (r as unknown as { dataset: { resource: string } }).dataset.resource))]), ["outbound/users"]);
    await context.close();
  });

  it("shows another customer's manager none of it, and offers a plain login no such page", async () => {
    const acme = apiAs(boss);
    await acme.putOutboundProfile("acme-only", { fax: { csid: "ACME ONLY" } });
    await acme.putOutboundUser("carol@acme.example", { general: { profile: "acme-only" }, pin: "24681357" });
    await acme.putOutboundDomain("acme.example");

    const { context, page } = await openPage(globex);
    await page.locator('[data-section="users"]').getByText("No users yet.").waitFor();
    await page.locator('[data-section="profiles"]').getByText("No profiles yet.").waitFor();
    await page.locator('[data-section="domains"]').getByText("No domains allowed.").waitFor();
    await page.locator('[data-section="audit"]').getByText("No changes recorded.").waitFor();
    const html = await page.content();
    for (const text of ["carol@acme.example", "acme-only", "acme.example", "ACME ONLY"]) assert.ok(!html.includes(text), `${text} is not shown to another customer`);
    await expectAccessible(page, "another customer's empty page");
    await context.close();

    const plainContext = await browser.newContext({ locale: "en-GB" });
    const plain = await plainContext.newPage();
    await plain.goto(`${node.url}/`);
    await plain.getByLabel("Login").fill(clerk.login);
    await plain.getByLabel("Password").fill(clerk.password);
    await plain.getByRole("button", { name: "Sign in" }).click();
    await plain.getByRole("heading", { level: 1, name: "Jobs" }).waitFor();
    assert.equal(await plain.getByRole("link", { name: "Mail to fax" }).count(), 0, "no link for a login that manages nothing");
    await plain.goto(`${node.url}/console/mail-to-fax`);
    await plain.getByRole("heading", { level: 1, name: "Jobs" }).waitFor();
    await plainContext.close();
  });

  it("lets an operator name the customer and page through its profiles", async () => {
    const acme = apiAs(ops, boss.custNr);
    for (let i = 1; i <= 22; i++) await acme.putOutboundProfile(`team-${String(i).padStart(2, "0")}`, {});
    const { context, page } = await openPage(ops);
    await page.locator('[data-section="users"]').getByText("No users yet.").waitFor();
    // A customer that does not exist: the API's answer once, no sections.
    await page.getByRole("textbox", { name: /^Customer/ }).fill("NO-SUCH-CUSTOMER");
    await page.getByRole("button", { name: "Show" }).click();
    await page.getByRole("alert").filter({ hasText: 'There is no customer "NO-SUCH-CUSTOMER"' }).waitFor();
    assert.equal(await page.getByRole("alert").count(), 1, "one message");
    assert.equal(await page.locator("[data-section]").count(), 0, "no sections");
    await page.getByRole("textbox", { name: /^Customer/ }).fill(boss.custNr);
    await page.getByRole("button", { name: "Show" }).click();
    await page.locator('tr[data-user="carol@acme.example"]').waitFor();
    const profiles = page.locator('[data-section="profiles"]');
    await profiles.getByText("Entries 1 to 20").waitFor();
    assert.equal(await profiles.locator("tr[data-profile]").count(), 20);
    const all = (await acme.listOutboundProfiles({ limit: 1000 })).map((p) => p.name);
    assert.ok(all.length > 20 && all.length <= 40, `${all.length} profiles: two pages`);
    await profiles.getByRole("button", { name: "Next" }).click();
    await profiles.getByText(`Entries 21 to ${all.length}`).waitFor();
    assert.deepEqual(await profiles.locator("tr[data-profile]").evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { profile: string } }).dataset.profile)), all.slice(20), "the API's second page, by name");
    assert.equal(await profiles.getByRole("button", { name: "Next" }).isDisabled(), true, "no third page");
    await expectAccessible(page, "an operator's page");
    await context.close();
  });

  it("speaks German, naming the refused field in German", async () => {
    const { context, page } = await openPage(globex, "de-DE");
    await page.getByRole("heading", { level: 2, name: "Einstellungen des Kunden" }).waitFor();
    await page.getByRole("button", { name: "Neues Profil" }).click();
    const profileForm = page.locator('[data-form="m2f-profile-form"]');
    await profileForm.locator('[name="name"]').fill("vertrieb");
    await profileForm.getByLabel("Diese Vorwahl von Nummern entfernen").fill("x9");
    await profileForm.getByRole("button", { name: "Speichern" }).click();
    await expectRefusal(profileForm, "dialing.removePrefix", /^Diese Vorwahl von Nummern entfernen: dialing\.removePrefix must be up to 4 digits/);
    await profileForm.getByLabel("Diese Vorwahl von Nummern entfernen").fill("");
    await profileForm.getByLabel("Papier").selectOption("A4");
    await profileForm.getByRole("button", { name: "Speichern" }).click();
    await page.locator('[data-section="profiles"]').getByRole("status").filter({ hasText: "vertrieb gespeichert." }).waitFor();
    await page.locator('[data-section="audit"] tr[data-resource="outbound/profiles"][data-key="vertrieb"]').filter({ hasText: "Mail-to-Fax-Profil vertrieb angelegt" }).waitFor();
    await expectAccessible(page, "the German page");
    await context.close();
  });
});
