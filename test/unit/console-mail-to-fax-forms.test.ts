/**
 * The Mail to fax page's pure parts (packages/console/src/pages/mail-to-fax/): the settings
 * groups as form values and back (empty is inherited: left out of what is sent), a
 * personalization line that is no Name=value refused at its field, the values a level
 * inherits, and an audit entry's changed fields.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { changedFields } from "../../packages/console/src/pages/mail-to-fax/audit-changes.ts";
import { formOf, FormProblem, groupsOf, inheritedOf, SETTINGS_PATHS } from "../../packages/console/src/pages/mail-to-fax/settings-fields.ts";

describe("the Mail to fax page's settings forms", () => {
  it("turns a level's groups into form values and back, leaving inherited fields out", () => {
    const own = { general: { active: false }, fax: { csid: "ACME", paperFormat: "LETTER", isExpress: true }, dialing: {}, reportEmail: { attachFaxImage: "ALWAYS" }, coverSheet: {}, personalization: { FromName: "Anna = Sales" } };
    const values = formOf(own);
    assert.equal(values["fax.csid"], "ACME");
    assert.equal(values["general.active"], "false");
    assert.equal(values["fax.resolution"], "", "unset: inherited");
    assert.equal(values.personalization, "FromName=Anna = Sales");
    assert.deepEqual(Object.keys(values).sort(), [...SETTINGS_PATHS].sort(), "every field of every group");
    assert.deepEqual(groupsOf(values), {
      general: { active: false },
      fax: { csid: "ACME", paperFormat: "LETTER", isExpress: true },
      reportEmail: { attachFaxImage: "ALWAYS" },
      personalization: { FromName: "Anna = Sales" },
    });
    assert.deepEqual(groupsOf(formOf({})), {}, "nothing set: every group inherited");
  });

  it("refuses a personalization line that is no Name=value, naming the field", () => {
    const values = { ...formOf({}), personalization: "FromName=Anna\njust text" };
    assert.throws(() => groupsOf(values), (err: unknown) => err instanceof FormProblem && err.field === "personalization" && /"just text" is not Name=value/.test(err.message));
  });

  it("reads what a level inherits from its parent's effective values", () => {
    const inherited = inheritedOf({ general: { active: true, language: "en" }, fax: { csid: null, paperFormat: "A4" }, dialing: { removePrefix: "0" } });
    assert.equal(inherited["fax.paperFormat"], "A4");
    assert.equal(inherited["dialing.removePrefix"], "0");
    assert.equal(inherited["fax.csid"], null);
    assert.deepEqual(inheritedOf(null), {});
  });
});

describe("the Mail to fax page's audit log", () => {
  it("lists each field an entry changed, before and after", () => {
    assert.deepEqual(changedFields(null, { email: "a@example.org", hasPin: true, pin: "(set)", fax: {} }), [
      { field: "email", before: null, after: "a@example.org" },
      { field: "hasPin", before: null, after: "true" },
      { field: "pin", before: null, after: "(set)" },
    ]);
    assert.deepEqual(changedFields({ fax: { csid: "A", resolution: "LOW" }, personalization: { x: "1" } }, { fax: { csid: "B", resolution: "LOW" }, personalization: {} }), [
      { field: "fax.csid", before: "A", after: "B" },
      { field: "personalization.x", before: "1", after: null },
    ]);
    assert.deepEqual(changedFields({ a: 1 }, { a: 1 }), []);
  });
});
