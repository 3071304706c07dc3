/**
 * What a job renders with when it leaves a rendering option to its account
 * (src/scheduler/render-setup.ts: renderSetupFor): the customer's default tone mode
 * (`faxline accounts set-tone-mode`, migration 0010) and default header line, and the job's own
 * values over them. One body, every store dialect.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogin } from "../../src/accounts/accounts.ts";
import { setDefaultHeader, setDefaultToneMode } from "../../src/accounts/rendering-settings.ts";
import { renderSetupFor, type RenderSpec } from "../../src/scheduler/render-setup.ts";
import { DIALECTS, openTestStore, testStore } from "../support/dialects.ts";
import { testConfig } from "../support/test-node.ts";

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

for (const dialect of DIALECTS) {
  describe(`${dialect}: render setup from the account's defaults`, () => {
    it("takes the account's tone mode and header for a job that gives none, and the job's own over them", async () => {
      const dir = mkdtempSync(join(tmpdir(), "faxline-render-setup-"));
      dirs.push(dir);
      const ts = await testStore(dialect);
      const store = await openTestStore(ts, dir);
      try {
        const config = testConfig(dir, ts.overrides);
        await createLogin(store.db, { custNr: "55501", login: "setup", password: "setup-password", isTest: true }, Date.now());
        const spec: RenderSpec = {
          custNr: "55501",
          paperFormat: "A4",
          resolution: "HIGH",
          header: null,
          csid: null,
          coverpageTemplate: null,
          overlay: null,
          toneMode: null,
          suppressBlankPages: false,
          recipients: [{ id: "r1", number: "+4930123456", properties: {} }],
        };
        const toneModeOf = async (s: RenderSpec) => {
          const setup = await renderSetupFor(store.db, config, Date.now(), s);
          assert.ok(setup.ok);
          return { toneMode: setup.input.toneMode, header: setup.input.header?.template ?? null };
        };
        assert.deepEqual(await toneModeOf(spec), { toneMode: "AUTO", header: null }, "no defaults: AUTO, no header");
        assert.equal(await setDefaultToneMode(store.db, "55501", " photo "), "PHOTO", "any letter case");
        await setDefaultHeader(store.db, "55501", "ACME %P/%T");
        assert.deepEqual(await toneModeOf(spec), { toneMode: "PHOTO", header: "ACME %P/%T" });
        assert.deepEqual(await toneModeOf({ ...spec, toneMode: "TEXT", header: "Own %P" }), { toneMode: "TEXT", header: "Own %P" }, "the job's own");
        await assert.rejects(setDefaultToneMode(store.db, "55501", "SEPIA"), /must be one of AUTO, TEXT, PHOTO, THRESHOLD/);
        await assert.rejects(setDefaultToneMode(store.db, "99999", "TEXT"), /No customer "99999"/);
        assert.equal(await setDefaultToneMode(store.db, "55501", "AUTO"), null, "AUTO is kept as no default");
        assert.equal((await toneModeOf(spec)).toneMode, "AUTO", "removed: AUTO again");
        for (const suppressBlankPages of [false, true]) {
          const setup = await renderSetupFor(store.db, config, Date.now(), { ...spec, suppressBlankPages });
          assert.ok(setup.ok);
          assert.equal(setup.input.suppressBlankPages, suppressBlankPages, "the job's suppress_blank_pages reaches the renderer");
        }
      } finally {
        await store.close();
        await ts.drop();
      }
    });
  });
}
