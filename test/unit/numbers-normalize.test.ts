import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  normalizeFaxNumber,
  REGION_NUMBER_CONTEXT,
  toDialString,
} from "../../src/numbers/normalize-number.ts";
import type { NumberContext } from "../../src/numbers/normalize-number.ts";

const { DE, US } = REGION_NUMBER_CONTEXT;

type OkCase = { input: string; ctx: NumberContext; e164: string; why: string };

const OK_CASES: OkCase[] = [
  // leading "+"
  { input: "+4989123456", ctx: DE, e164: "+4989123456", why: "plain E.164" },
  { input: "+49 89 1234567-8900", ctx: DE, e164: "+498912345678900", why: "spaces and extension dash" },
  { input: "+1 (201) 555-1000", ctx: DE, e164: "+12015551000", why: "parenthesised area code" },
  { input: "+49.89.123456", ctx: DE, e164: "+4989123456", why: "dots as separators" },
  { input: "+49/89/123456", ctx: DE, e164: "+4989123456", why: "slashes as separators" },
  { input: "  +4989123456  ", ctx: DE, e164: "+4989123456", why: "surrounding whitespace trimmed" },
  { input: "+ 49 89 123456", ctx: DE, e164: "+4989123456", why: "space after +" },
  { input: "+4900000000", ctx: DE, e164: "+4900000000", why: "10-digit test number stays valid" },
  { input: "+1234567", ctx: DE, e164: "+1234567", why: "7 digits is the minimum" },
  { input: "+123456789012345", ctx: DE, e164: "+123456789012345", why: "15 digits is the maximum" },
  // "(0)" trunk prefix in parentheses
  { input: "+49 (0)89 12345", ctx: DE, e164: "+498912345", why: "(0) after country code dropped" },
  { input: "+49(0)8912345", ctx: DE, e164: "+498912345", why: "(0) without spaces dropped" },
  { input: "+49 ( 0 ) 89 12345", ctx: DE, e164: "+498912345", why: "(0) with inner spaces dropped" },
  { input: "0049 (0)89 12345", ctx: DE, e164: "+498912345", why: "(0) after 00-prefixed country code dropped" },
  { input: "011 44 (0)20 7946 0000", ctx: US, e164: "+442079460000", why: "(0) after 011-prefixed country code dropped" },
  { input: "+49 89 12(0)345", ctx: DE, e164: "+4989120345", why: "(0) deep inside the number is a digit" },
  // international prefix
  { input: "004989123456", ctx: DE, e164: "+4989123456", why: "DE 00 prefix" },
  { input: "0012012051598", ctx: DE, e164: "+12012051598", why: "00 prefix to NANP" },
  { input: "00 49 89 123456", ctx: DE, e164: "+4989123456", why: "00 prefix with spaces" },
  { input: "011 49 89 123456", ctx: US, e164: "+4989123456", why: "US 011 prefix" },
  { input: "0049 89 123456", ctx: US, e164: "+4989123456", why: "00 always accepted, even in US context" },
  // national
  { input: "(089) 1234-5", ctx: DE, e164: "+498912345", why: "DE national with trunk 0" },
  { input: "089 123456", ctx: DE, e164: "+4989123456", why: "DE national" },
  { input: "(0)89 123456", ctx: DE, e164: "+4989123456", why: "national number written with (0)" },
  { input: "(201) 555-1000", ctx: US, e164: "+12015551000", why: "US 10 digits" },
  { input: "201.555.1000", ctx: US, e164: "+12015551000", why: "US 10 digits with dots" },
  { input: "1 (201) 555-1000", ctx: US, e164: "+12015551000", why: "US 11 digits starting with 1" },
  { input: "12015551000", ctx: US, e164: "+12015551000", why: "US 11 digits, no separators" },
  // bare digits without prefix
  { input: "4900000000000", ctx: DE, e164: "+4900000000000", why: "DE bare digits are international" },
  { input: "4989123456", ctx: DE, e164: "+4989123456", why: "DE bare digits, 10 long" },
  { input: "4989123456789", ctx: US, e164: "+4989123456789", why: "US bare digits, not 10/11 long" },
];

type ErrCase = { input: string; ctx: NumberContext; includes: string[]; why: string };

const ERR_CASES: ErrCase[] = [
  { input: "", ctx: DE, includes: ["empty"], why: "empty" },
  { input: "   ", ctx: DE, includes: ["empty"], why: "whitespace only" },
  { input: "+", ctx: DE, includes: ['"+"', "no digits"], why: "only +" },
  { input: "() - /", ctx: DE, includes: ["no digits"], why: "separators only" },
  { input: "+49 89 abc", ctx: DE, includes: ['"a"', "not allowed", '"+"'], why: "letters" },
  { input: "+49 89 123456*", ctx: DE, includes: ['"*"', "not allowed"], why: "star" },
  { input: "+49 89 123456#", ctx: DE, includes: ['"#"'], why: "hash" },
  { input: "+4989123456;+4989654321", ctx: DE, includes: ['";"'], why: "semicolon list" },
  { input: "+4989123456,1", ctx: DE, includes: ['","'], why: "comma pause" },
  { input: "+49\u00a089123456", ctx: DE, includes: ["U+00A0"], why: "non-breaking space" },
  { input: "+49 89 12345é", ctx: DE, includes: ['"é"', "U+00E9"], why: "accented letter" },
  { input: "49+89123456", ctx: DE, includes: ['"+"', "first character"], why: "+ not at start" },
  { input: "++4989123456", ctx: DE, includes: ['"+"', "position 2"], why: "double +" },
  { input: "+0049891234", ctx: DE, includes: ["country code", '"0"'], why: "+0…" },
  { input: "+0 89 123456", ctx: DE, includes: ["country code", "after \"+\""], why: "+0 country code" },
  { input: "000 89 123456", ctx: DE, includes: ["country code", "international prefix"], why: "00 then 0" },
  { input: "00", ctx: DE, includes: ["nothing after the international prefix"], why: "prefix only" },
  { input: "+123456", ctx: DE, includes: ["too short", "6 digits"], why: "6 digits" },
  { input: "0891", ctx: DE, includes: ["too short", "+49891"], why: "short national" },
  { input: "+1234567890123456", ctx: DE, includes: ["too long", "16 digits"], why: "16 digits" },
  { input: "00 49 89 1234567-890123", ctx: DE, includes: ["too long"], why: "too long after 00" },
  { input: "0 201 555 1000", ctx: US, includes: ['starts with "0"', '"011"'], why: "US leading 0 without 011" },
];

describe("normalizeFaxNumber: accepted numbers", () => {
  for (const c of OK_CASES) {
    it(`${JSON.stringify(c.input)} → ${c.e164} (${c.why})`, () => {
      const r = normalizeFaxNumber(c.input, c.ctx);
      assert.deepEqual(r, { ok: true, e164: c.e164, dialString: `00${c.e164.slice(1)}` });
    });
  }

  it("gives the contract's sentToNumber form for the documented examples", () => {
    assert.deepEqual(normalizeFaxNumber("+4989123456", DE), {
      ok: true,
      e164: "+4989123456",
      dialString: "004989123456",
    });
    assert.deepEqual(normalizeFaxNumber("0012012051598", DE), {
      ok: true,
      e164: "+12012051598",
      dialString: "0012012051598",
    });
    // dial string is 00-style even in a US context
    const us = normalizeFaxNumber("(201) 555-1000", US);
    assert.ok(us.ok);
    assert.equal(us.dialString, "0012015551000");
  });
});

describe("normalizeFaxNumber: rejected numbers", () => {
  for (const c of ERR_CASES) {
    it(`${JSON.stringify(c.input)} is rejected (${c.why})`, () => {
      const r = normalizeFaxNumber(c.input, c.ctx);
      assert.equal(r.ok, false, `expected rejection, got ${JSON.stringify(r)}`);
      if (r.ok) return;
      for (const part of c.includes) {
        assert.ok(r.message.includes(part), `message ${JSON.stringify(r.message)} should mention ${part}`);
      }
    });
  }

  it("uses the documented sentence for disallowed characters", () => {
    const r = normalizeFaxNumber("+49 89 abc", DE);
    assert.deepEqual(r, {
      ok: false,
      message:
        'Fax number "+49 89 abc" contains "a", which is not allowed; ' +
        'use digits, spaces, "-", ".", "/", "(", ")" and an optional leading "+"',
    });
  });

  it("shortens very long inputs in messages", () => {
    const r = normalizeFaxNumber(`+49${"1".repeat(200)}x`, DE);
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.ok(r.message.length < 250, r.message);
    assert.ok(r.message.includes("…"));
  });

  it("never throws, even for non-string input at runtime", () => {
    const r = normalizeFaxNumber(undefined as unknown as string, DE);
    assert.equal(r.ok, false);
  });
});

describe("toDialString", () => {
  it("turns E.164 into 00-style", () => {
    assert.equal(toDialString("+4989123456"), "004989123456");
    assert.equal(toDialString("+12012051598"), "0012012051598");
  });

  it("rejects values that are not E.164", () => {
    assert.throws(() => toDialString("4989123456"), RangeError);
    assert.throws(() => toDialString("+0989123456"), RangeError);
    assert.throws(() => toDialString("+123"), RangeError);
  });
});

describe("REGION_NUMBER_CONTEXT", () => {
  it("has the DE and US conventions", () => {
    assert.deepEqual(DE, { defaultCountryCode: "49", internationalPrefix: "00", nationalPrefix: "0" });
    assert.deepEqual(US, { defaultCountryCode: "1", internationalPrefix: "011", nationalPrefix: "1" });
  });
});
