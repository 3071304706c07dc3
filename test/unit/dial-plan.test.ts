/**
 * Trunks and the dial plan: the trunks file (defaults, every validation message names the file,
 * trunk and field), loading it through loadConfig, routing by longest prefix with overflow, the
 * dial formats and strip/prefix rule, the SIP URIs and sentToNumber.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { loadConfig } from "../../src/config/load.ts";
import { ConfigError } from "../../src/config/schema.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { parseTrunks, TRUNK_FIELDS, normalizeRoutePrefix, type TrunkConfig } from "../../src/line/trunks/trunk-config.ts";
import { formatDialString, hostPortAddress, matchRoute, planDial, proxyAddressFor, selectTrunk } from "../../src/line/trunks/dial-plan.ts";
import { tempDir } from "../support/test-node.ts";

const DE = REGION_NUMBER_CONTEXT.DE;
const US = REGION_NUMBER_CONTEXT.US;
const SOURCE = "trunks.yaml";

function trunks(yaml: string, env: NodeJS.ProcessEnv = {}): TrunkConfig[] {
  return parseTrunks(parseYaml(yaml), { source: SOURCE, env });
}

function one(fields: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): TrunkConfig {
  return parseTrunks({ trunks: [{ name: "t1", proxy: "sip.example.net", callerNumber: "+4989998877", routes: ["+"], ...fields }] }, { source: SOURCE, env })[0]!;
}

function rejects(fields: Record<string, unknown>, ...patterns: RegExp[]): void {
  assert.throws(
    () => one(fields),
    (err: Error) => {
      assert.ok(err instanceof ConfigError, `expected ConfigError, got ${err.name}`);
      assert.match(err.message, /trunks\.yaml/);
      for (const p of patterns) assert.match(err.message, p);
      return true;
    },
  );
}

describe("trunks file", () => {
  it("fills in the documented defaults", () => {
    const t = one({});
    assert.deepEqual(t.proxy, { host: "sip.example.net", port: 5060, portGiven: false });
    assert.equal(proxyAddressFor(t), "sip.example.net", "no port written: the user agent looks the name up by DNS SRV first");
    assert.equal(hostPortAddress({ host: "sip.example.net", port: 5080, portGiven: true }), "sip.example.net:5080");
    assert.equal(hostPortAddress({ host: "192.0.2.7", port: 5060, portGiven: false }), "192.0.2.7:5060", "an address has no SRV records");
    assert.equal(hostPortAddress({ host: "2001:db8::1", port: 5060, portGiven: false }), "[2001:db8::1]:5060");
    assert.equal(t.registrar, null);
    assert.equal(t.domain, "sip.example.net");
    assert.equal(t.transport, "auto", "no transport written: DNS chooses (RFC 3263), UDP for an address or host:port");
    assert.equal(t.username, "");
    assert.equal(t.password, "");
    assert.equal(t.csid, null);
    assert.deepEqual(t.dial, { format: "international", internationalPrefix: null, strip: "", prefix: "" });
    assert.equal(t.maxCalls, 30);
    assert.equal(t.t38, true);
    assert.equal(t.ecm, true);
    assert.equal(t.ringTimeoutMs, 55_000);
    assert.equal(t.registerExpiresMs, 3_600_000);
  });

  it("reads every field", () => {
    const t = one(
      {
        proxy: "[2001:db8::1]:5070",
        registrar: "reg.example.net:5080",
        registerExpires: "30m",
        domain: "carrier.example",
        transport: "TLS",
        username: "4989998877",
        passwordEnv: "TRUNK_PW",
        csid: "+49 89 998877",
        dial: { format: "national", internationalPrefix: "000", strip: "0", prefix: "*31#" },
        maxCalls: 4,
        t38: false,
        ecm: false,
        routes: ["+49 89", "0043", "41"],
        ringTimeout: "40s",
      },
      { TRUNK_PW: "s3cret" },
    );
    assert.deepEqual(t.proxy, { host: "2001:db8::1", port: 5070 });
    assert.deepEqual(t.registrar, { host: "reg.example.net", port: 5080 });
    assert.equal(t.registerExpiresMs, 1_800_000);
    assert.equal(t.domain, "carrier.example");
    assert.equal(t.transport, "tls");
    assert.equal(t.password, "s3cret");
    assert.equal(t.passwordEnv, "TRUNK_PW");
    assert.equal(t.csid, "+49 89 998877");
    assert.deepEqual(t.dial, { format: "national", internationalPrefix: "000", strip: "0", prefix: "*31#" });
    assert.equal(t.maxCalls, 4);
    assert.equal(t.t38, false);
    assert.equal(t.ecm, false);
    assert.deepEqual(t.routes, ["+4989", "+43", "+41"]);
    assert.equal(t.ringTimeoutMs, 40_000);
  });

  it("defaults the TLS port to 5061 and keeps a non-default proxy port in the domain", () => {
    assert.deepEqual(one({ transport: "tls" }).proxy, { host: "sip.example.net", port: 5061, portGiven: false });
    assert.equal(one({ proxy: "10.1.2.3:5080" }).domain, "10.1.2.3:5080");
    assert.equal(one({ proxy: "[2001:db8::1]" }).domain, "[2001:db8::1]");
  });

  it("refuses bad fields with a message naming the trunk and the field", () => {
    rejects({ proxy: undefined }, /trunk "t1" \(trunks\[0\]\)/, /field proxy/, /required/);
    rejects({ proxy: "sip.example.net:99999" }, /field proxy/, /1 to 65535/);
    rejects({ proxy: "sip example" }, /field proxy/, /not a host name/);
    rejects({ proxy: "2001:db8::1" }, /field proxy/, /brackets/);
    rejects({ transport: "sctp" }, /field transport/, /udp, tcp, tls/);
    rejects({ callerNumber: 4989998877 }, /field callerNumber/, /in quotes/);
    rejects({ callerNumber: "+49 89 998877" }, /field callerNumber/, /not a valid From user/);
    rejects({ password: "x" }, /field username/, /required when a password/);
    rejects({ username: "u", password: "x", passwordEnv: "PW" }, /field password/, /both set/);
    rejects({ username: "u", passwordEnv: "FAXLINE_TRUNK_T1_PASSWORD" }, /field passwordEnv/, /FAXLINE_TRUNK_T1_PASSWORD is not set/);
    rejects({ username: "u@x" }, /field username/);
    rejects({ csid: "x".repeat(21) }, /field csid/, /at most 20/);
    rejects({ csid: "Fäx" }, /field csid/, /printable ASCII/);
    rejects({ dial: { format: "local" } }, /field dial\.format/, /e164, international, digits, national/);
    rejects({ dial: { prefix: "9a" } }, /field dial\.prefix/);
    rejects({ dial: { strip: "x" } }, /field dial\.strip/);
    rejects({ dial: { internationalPrefix: "+" } }, /field dial\.internationalPrefix/);
    rejects({ dial: { formta: "e164" } }, /field dial/, /unknown fields formta/);
    rejects({ maxCalls: 0 }, /field maxCalls/, /from 1 to 1000/);
    rejects({ maxCalls: "ten" }, /field maxCalls/, /whole number/);
    rejects({ t38: "yes" }, /field t38/, /true or false/);
    rejects({ ringTimeout: "2s" }, /field ringTimeout/, /10s and 5m/);
    rejects({ ringTimeout: "soon" }, /field ringTimeout/, /duration/);
    rejects({ registerExpires: "10m" }, /field registerExpires/, /registrar is not/);
    rejects({ routes: undefined }, /field routes/, /required/);
    rejects({ routes: [] }, /field routes/, /empty/);
    rejects({ routes: "+49" }, /field routes/, /list/);
    rejects({ routes: ["+49", "0049"] }, /field routes\[1\]/, /listed twice/);
    rejects({ routes: ["089"] }, /field routes\[0\]/, /not an E\.164 prefix/);
    rejects({ routes: [49] }, /field routes\[0\]/, /in quotes/);
    rejects({ ringTimout: "30s" }, /unknown fields ringTimout/);
    rejects({ name: "bad name" }, /field name/);
  });

  it("refuses a malformed file and duplicate names", () => {
    assert.throws(() => trunks(""), /is empty/);
    assert.throws(() => trunks("- name: a\n"), /top level must be a mapping/);
    assert.throws(() => trunks("trunk:\n  - name: a\n"), /unknown top-level keys trunk/);
    assert.throws(() => trunks("trunks: []\n"), /"trunks" is empty/);
    assert.throws(() => trunks("trunks:\n  - just text\n"), /trunks\[0\] must be a mapping/);
    const dup = 'trunks:\n  - {name: a, proxy: p.example, callerNumber: "1", routes: ["+"]}\n  - {name: A, proxy: q.example, callerNumber: "1", routes: ["+1"]}\n';
    assert.throws(() => trunks(dup), /trunks\[0\] and trunks\[1\] are both named "A"/);
  });

  it("normalises route prefixes", () => {
    assert.equal(normalizeRoutePrefix("+"), "+");
    assert.equal(normalizeRoutePrefix("+49 (89)"), "+4989");
    assert.equal(normalizeRoutePrefix("0049"), "+49");
    assert.equal(normalizeRoutePrefix("1"), "+1");
    assert.equal(normalizeRoutePrefix("+0"), undefined);
    assert.equal(normalizeRoutePrefix(""), undefined);
    assert.equal(normalizeRoutePrefix("+49x"), undefined);
  });

  it("is loaded by loadConfig from lines.trunksFile, with the password from the environment", () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, "trunks.yaml");
      writeFileSync(file, 'trunks:\n  - name: carrier\n    proxy: sip.carrier.example\n    username: u\n    passwordEnv: CARRIER_PW\n    callerNumber: "+4989998877"\n    routes: ["+49"]\n');
      const config = loadConfig({ env: { FAXLINE_LINES_TRUNKS_FILE: file, CARRIER_PW: "pw" } });
      assert.equal(config.lines.trunks.length, 1);
      assert.equal(config.lines.trunks[0]!.password, "pw");
      assert.ok(Object.isFrozen(config.lines.trunks[0]!.routes));
      assert.throws(() => loadConfig({ env: { FAXLINE_LINES_TRUNKS_FILE: file } }), (err: Error) => err instanceof ConfigError && /trunk "carrier"/.test(err.message) && /CARRIER_PW/.test(err.message));
      assert.throws(() => loadConfig({ env: { FAXLINE_LINES_TRUNKS_FILE: join(dir.path, "none.yaml") } }), /Cannot read the trunks file/);
      writeFileSync(file, "trunks: [\n");
      assert.throws(() => loadConfig({ env: { FAXLINE_LINES_TRUNKS_FILE: file } }), /not valid YAML/);
      assert.deepEqual(loadConfig({ env: {} }).lines.trunks, []);
      assert.equal(loadConfig({ env: {} }).lines.capabilityMaxAge, 30 * 86_400_000);

      const main = join(dir.path, "faxline.yaml");
      writeFileSync(main, "lines:\n  trunks:\n    - name: x\n");
      assert.throws(() => loadConfig({ file: main, env: {} }), /lines\.trunksFile \(docs\/trunks\.md\)/);
    } finally {
      dir.remove();
    }
  });

  it("docs/trunks.md describes every field, and its example is a valid trunks file", () => {
    const doc = readFileSync("docs/trunks.md", "utf8");
    for (const f of TRUNK_FIELDS) assert.ok(doc.includes(`| \`${f.field}\` |`), `docs/trunks.md lacks a row for ${f.field}`);
    const example = /```yaml\n([\s\S]*?)```/.exec(doc)![1]!;
    const parsed = trunks(example, { FAXLINE_TRUNK_CARRIER_A_PASSWORD: "a", FAXLINE_TRUNK_CARRIER_B_PASSWORD: "b" });
    assert.deepEqual(parsed.map((t) => t.name), ["carrier-a", "munich-gw", "carrier-b"]);
    const plan = (n: string) => planDial(n, parsed, { region: DE, defaultCsid: "Faxline" });
    const munich = plan("089 123456");
    assert.ok(munich.ok && munich.trunk.name === "munich-gw" && munich.dialString === "0089123456");
    const berlin = plan("+49 30 123456");
    assert.ok(berlin.ok && berlin.trunk.name === "carrier-a" && berlin.dialString === "004930123456");
    const paris = plan("+33 1 23456789");
    assert.ok(paris.ok && paris.trunk.name === "carrier-b" && paris.dialString === "33123456789");
  });
});

describe("dial plan", () => {
  const plan = trunks(`
trunks:
  - {name: de, proxy: de.example, callerNumber: "+4989998877", routes: ["+49"], maxCalls: 2}
  - {name: de-overflow, proxy: de2.example, callerNumber: "+4989998877", routes: ["+49"], maxCalls: 1}
  - {name: munich, proxy: muc.example, callerNumber: "089998877", routes: ["+4989"], dial: {format: national}}
  - {name: world, proxy: world.example, callerNumber: "+4989998877", routes: ["+", "+1"], dial: {format: e164}}
`);

  it("picks the trunk by the longest matching prefix", () => {
    assert.equal(matchRoute("+4989123456", plan)!.prefix, "+4989");
    assert.deepEqual(matchRoute("+4989123456", plan)!.trunks.map((t) => t.name), ["munich"]);
    assert.deepEqual(matchRoute("+4930123456", plan)!.trunks.map((t) => t.name), ["de", "de-overflow"]);
    assert.deepEqual(matchRoute("+12125551234", plan), { prefix: "+1", trunks: [plan[3]] });
    assert.deepEqual(matchRoute("+33123456789", plan)!.prefix, "+");
    assert.deepEqual(matchRoute("+4930123456", plan.slice(2))!.trunks.map((t) => t.name), ["world"]);
    assert.equal(matchRoute("+33123456789", plan.slice(0, 3)), null);
  });

  it("overflows to the next trunk of the same prefix only, in file order", () => {
    const sel = (active: Record<string, number>) => selectTrunk("+4930123456", plan, new Map(Object.entries(active)));
    assert.deepEqual(sel({}), { kind: "trunk", trunk: plan[0], prefix: "+49" });
    assert.deepEqual(sel({ de: 1 }), { kind: "trunk", trunk: plan[0], prefix: "+49" });
    assert.deepEqual(sel({ de: 2 }), { kind: "trunk", trunk: plan[1], prefix: "+49" });
    const full = sel({ de: 2, "de-overflow": 1 });
    assert.equal(full.kind, "full");
    // A full longest-prefix route does not spill onto the shorter "+" route.
    const muc = selectTrunk("+4989123", plan, new Map([["munich", 30]]));
    assert.equal(muc.kind, "full");
    assert.equal(selectTrunk("+4930123456", plan.slice(2, 3)).kind, "no_route");
  });

  const cases: { rule: Partial<TrunkConfig["dial"]>; e164: string; region?: typeof DE; expected: string }[] = [
    { rule: { format: "international" }, e164: "+4989123456", expected: "004989123456" },
    { rule: { format: "international" }, e164: "+4989123456", region: US, expected: "0114989123456" },
    { rule: { format: "international", internationalPrefix: "00" }, e164: "+4989123456", region: US, expected: "004989123456" },
    { rule: { format: "e164" }, e164: "+4989123456", expected: "+4989123456" },
    { rule: { format: "digits" }, e164: "+4989123456", expected: "4989123456" },
    { rule: { format: "national" }, e164: "+4989123456", expected: "089123456" },
    { rule: { format: "national" }, e164: "+4312345678", expected: "004312345678" },
    { rule: { format: "national" }, e164: "+12125551234", region: US, expected: "12125551234" },
    { rule: { format: "national" }, e164: "+4989123456", region: US, expected: "0114989123456" },
    { rule: { format: "e164", strip: "+" }, e164: "+4989123456", expected: "4989123456" },
    { rule: { format: "international", strip: "0049", prefix: "0" }, e164: "+4989123456", expected: "089123456" },
    { rule: { format: "international", strip: "0049", prefix: "0" }, e164: "+4312345678", expected: "0004312345678" },
    { rule: { format: "national", prefix: "0" }, e164: "+4989123456", expected: "0089123456" },
    { rule: { format: "international", prefix: "*31#" }, e164: "+4989123456", expected: "*31#004989123456" },
  ];
  for (const c of cases) {
    it(`writes ${c.e164} as ${c.expected} (${JSON.stringify(c.rule)}${c.region === US ? ", region US" : ""})`, () => {
      const rule = { format: "international" as const, internationalPrefix: null, strip: "", prefix: "", ...c.rule };
      assert.equal(formatDialString(c.e164, rule, c.region ?? DE), c.expected);
    });
  }

  it("refuses a number that is not E.164", () => {
    assert.throws(() => formatDialString("089123456", { format: "e164", internationalPrefix: null, strip: "", prefix: "" }, DE), RangeError);
  });

  for (const input of ["+49 89 1234-5", "0049 89 12345", "00498912345", "089 12345", "+49 (0)89 12345", "498912345"]) {
    it(`normalises ${JSON.stringify(input)} and dials it over the trunk that routes it`, () => {
      const result = planDial(input, plan, { region: DE, defaultCsid: "Faxline" });
      assert.ok(result.ok, JSON.stringify(result));
      assert.equal(result.e164, "+498912345");
      assert.equal(result.trunk.name, "munich");
      assert.equal(result.routePrefix, "+4989");
      assert.equal(result.dialString, "08912345");
      assert.equal(result.sentToNumber, "08912345");
      assert.equal(result.requestUri, "sip:08912345@muc.example");
      assert.equal(result.toUri, result.requestUri);
      assert.equal(result.fromUri, "sip:089998877@muc.example");
    });
  }

  it("reports sentToNumber as the number actually dialled, and escapes # in the URI", () => {
    const t = one({ dial: { format: "international", prefix: "#31#" }, domain: "carrier.example:5070" });
    const result = planDial("+4930123456", [t], { region: DE, defaultCsid: "Faxline" });
    assert.ok(result.ok);
    assert.equal(result.sentToNumber, "#31#004930123456");
    assert.equal(result.requestUri, "sip:%2331%23004930123456@carrier.example:5070");
    assert.equal(result.fromUri, "sip:+4989998877@carrier.example:5070");
  });

  it("takes the job's CSID, else the trunk's, else sender.csid", () => {
    const withCsid = one({ csid: "TRUNK CSID" });
    const opts = { region: DE, defaultCsid: "Faxline" };
    const csid = (r: ReturnType<typeof planDial>) => (r.ok ? r.csid : null);
    assert.equal(csid(planDial("+4930123456", [withCsid], { ...opts, jobCsid: "JOB" })), "JOB");
    assert.equal(csid(planDial("+4930123456", [withCsid], opts)), "TRUNK CSID");
    assert.equal(csid(planDial("+4930123456", [one({})], { ...opts, jobCsid: null })), "Faxline");
  });

  it("fails with invalid_number, no_route or a full route", () => {
    const bad = planDial("12", plan, { region: DE, defaultCsid: "F" });
    assert.ok(!bad.ok && bad.reasonCode === "invalid_number" && /too short/.test(bad.message));
    const none = planDial("+33123456789", plan.slice(0, 3), { region: DE, defaultCsid: "F" });
    assert.ok(!none.ok && none.reasonCode === "no_route" && /\+49, \+4989/.test(none.message));
    const full = planDial("+4930123456", plan, { region: DE, defaultCsid: "F", activeCalls: new Map([["de", 2], ["de-overflow", 1]]) });
    assert.ok(!full.ok && full.reasonCode === null && "full" in full && /de: 2, de-overflow: 1/.test(full.message));
    const stripped = planDial("+4930123456", [one({ dial: { format: "digits", strip: "4930123456" } })], { region: DE, defaultCsid: "F" });
    assert.ok(!stripped.ok && stripped.reasonCode === "no_route" && /leaves no digits/.test(stripped.message));
  });
});
