// Normalises the recipient fax numbers clients send (international with "+" or "00",
// national with a trunk prefix, bare digits, "+49 (0)89 …" style) into E.164 ("+4989123456")
// and into the contract's `sentToNumber` dial string ("004989123456"). Pure, no I/O.
// Only the shape is checked (allowed characters, 7..15 digits, country code not starting
// with 0); country-specific number plans are deliberately not validated.

/** How numbers without a leading "+" are read for one region. */
export interface NumberContext {
  /** Country calling code without "+", e.g. "49". */
  defaultCountryCode: string;
  /** Digits that introduce an international number, e.g. "00" (DE) or "011" (US). "00" is always accepted too. */
  internationalPrefix: string;
  /** Trunk prefix of national numbers, e.g. "0" (DE) or "1" (US). */
  nationalPrefix: string;
}

export const REGION_NUMBER_CONTEXT: { readonly DE: NumberContext; readonly US: NumberContext } = Object.freeze({
  DE: Object.freeze({ defaultCountryCode: "49", internationalPrefix: "00", nationalPrefix: "0" }),
  US: Object.freeze({ defaultCountryCode: "1", internationalPrefix: "011", nationalPrefix: "1" }),
});

export type NormalizeResult =
  | { ok: true; e164: string; dialString: string }
  | { ok: false; message: string };

/** E.164 allows at most 15 digits; fewer than 7 cannot be a reachable international number. */
const MIN_DIGITS = 7;
const MAX_DIGITS = 15;
/** Inputs are echoed in messages; longer inputs are shortened there. */
const MAX_ECHO_CHARS = 40;

const ALLOWED_HINT = 'use digits, spaces, "-", ".", "/", "(", ")" and an optional leading "+"';
const EXAMPLE = '"+49 89 123456"';

const E164_PATTERN = /^\+[1-9][0-9]{6,14}$/;

/** Converts an E.164 number ("+4989…") into the 00-style dial string ("004989…") used as `sentToNumber`. */
export function toDialString(e164: string): string {
  if (!E164_PATTERN.test(e164)) {
    throw new RangeError(`toDialString expects an E.164 number such as "+4989123456", got ${quote(e164)}`);
  }
  return `00${e164.slice(1)}`;
}

/** Normalises one recipient number; never throws. */
export function normalizeFaxNumber(input: string, ctx: NumberContext): NormalizeResult {
  if (typeof input !== "string") {
    return fail(`Fax number must be text such as ${EXAMPLE}`);
  }
  const raw = input.trim();
  if (raw === "") {
    return fail(`Fax number is empty; enter the recipient's number, e.g. ${EXAMPLE}`);
  }

  // Single pass: reject disallowed characters, collect digits, and remember where a "(0)" group sits.
  let digits = "";
  let hasPlus = false;
  let trunkZeroIndex = -1; // index into `digits` of the 0 inside the first "(0)" group
  const chars = Array.from(raw); // code points, so surrogate pairs are reported whole
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (c >= "0" && c <= "9") {
      digits += c;
    } else if (c === "+") {
      if (i !== 0) {
        return fail(
          `Fax number ${quote(raw)} contains "+" at position ${i + 1}; "+" is only allowed once, as the very first character`,
        );
      }
      hasPlus = true;
    } else if (c === "(") {
      if (trunkZeroIndex === -1 && isTrunkZeroGroup(chars, i)) trunkZeroIndex = digits.length;
    } else if (c !== " " && c !== "-" && c !== "." && c !== "/" && c !== ")") {
      return fail(`Fax number ${quote(raw)} contains ${describeChar(c)}, which is not allowed; ${ALLOWED_HINT}`);
    }
  }

  if (digits === "") {
    return fail(`Fax number ${quote(raw)} contains no digits; enter the recipient's number, e.g. ${EXAMPLE}`);
  }

  let international: string; // country code + subscriber number, no prefix
  let prefixLength: number; // digits consumed by an international prefix (0 if none)
  let how: "plus" | "prefix" | "national" | "bare";

  const intlPrefix = ctx.internationalPrefix;
  if (hasPlus) {
    international = digits;
    prefixLength = 0;
    how = "plus";
  } else if (intlPrefix !== "" && digits.startsWith(intlPrefix)) {
    international = digits.slice(intlPrefix.length);
    prefixLength = intlPrefix.length;
    how = "prefix";
  } else if (digits.startsWith("00")) {
    international = digits.slice(2);
    prefixLength = 2;
    how = "prefix";
  } else if (ctx.defaultCountryCode === "1" && digits.length === 10) {
    // NANP: a 10-digit number is area code + subscriber number.
    international = `1${digits}`;
    prefixLength = 0;
    how = "national";
  } else if (ctx.defaultCountryCode === "1" && digits.length === 11 && digits.startsWith("1")) {
    // NANP: "1" + 10 digits is already the international form.
    international = digits;
    prefixLength = 0;
    how = "bare";
  } else if (ctx.nationalPrefix !== "" && digits.startsWith(ctx.nationalPrefix)) {
    international = ctx.defaultCountryCode + digits.slice(ctx.nationalPrefix.length);
    prefixLength = 0;
    how = "national";
  } else if (digits.startsWith("0")) {
    return fail(
      `Fax number ${quote(raw)} starts with "0" but not with the international prefix "${intlPrefix}" or "00"; ` +
        `write it as ${EXAMPLE}, with "+" and the country code`,
    );
  } else {
    // Bare digits without any prefix: read as an international number missing its "+".
    international = digits;
    prefixLength = 0;
    how = "bare";
  }

  // "+49 (0)89 …": the parenthesised trunk zero directly after a 1-3 digit country code is not dialled.
  if (how === "plus" || how === "prefix") {
    const ccDigitsBefore = trunkZeroIndex - prefixLength;
    if (trunkZeroIndex !== -1 && ccDigitsBefore >= 1 && ccDigitsBefore <= 3) {
      international = international.slice(0, ccDigitsBefore) + international.slice(ccDigitsBefore + 1);
    }
  }

  if (international === "") {
    return fail(
      `Fax number ${quote(raw)} has nothing after the international prefix; add the country code and number, e.g. ${EXAMPLE}`,
    );
  }
  if (international.startsWith("0")) {
    const after = how === "plus" ? '"+"' : "the international prefix";
    return fail(
      `Fax number ${quote(raw)} has a country code starting with "0" after ${after}; ` +
        `country codes never start with 0, so put the country code directly after ${after}, e.g. ${EXAMPLE}`,
    );
  }
  if (international.length < MIN_DIGITS) {
    return fail(
      `Fax number ${quote(raw)} is too short: it has ${international.length} digits including the country code ` +
        `(+${international}), but at least ${MIN_DIGITS} are needed; check that area code and number are complete`,
    );
  }
  if (international.length > MAX_DIGITS) {
    return fail(
      `Fax number ${quote(raw)} is too long: it has ${international.length} digits including the country code, ` +
        `but at most ${MAX_DIGITS} are possible; check for extra or duplicated digits`,
    );
  }

  const e164 = `+${international}`;
  return { ok: true, e164, dialString: toDialString(e164) };
}

/** True when chars[open] is "(" starting a group whose only content is a single "0" (spaces allowed). */
function isTrunkZeroGroup(chars: readonly string[], open: number): boolean {
  let i = open + 1;
  while (chars[i] === " ") i++;
  if (chars[i] !== "0") return false;
  i++;
  while (chars[i] === " ") i++;
  return chars[i] === ")";
}

function fail(message: string): NormalizeResult {
  return { ok: false, message };
}

/** Quotes user input for a message, shortening very long values. */
function quote(value: string): string {
  const cps = Array.from(value);
  const shown = cps.length > MAX_ECHO_CHARS ? `${cps.slice(0, MAX_ECHO_CHARS).join("")}…` : value;
  return JSON.stringify(shown);
}

/** Names a rejected character so a person can find it, including invisible ones. */
function describeChar(c: string): string {
  const cp = c.codePointAt(0) ?? 0;
  const code = `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
  if (cp >= 0x21 && cp <= 0x7e) return JSON.stringify(c);
  if (/[\p{L}\p{N}\p{P}\p{S}]/u.test(c)) return `${JSON.stringify(c)} (${code})`;
  return `an invisible character (${code})`;
}
