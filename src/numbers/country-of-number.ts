/**
 * The country of a fax number, as the reporting interface names it: ISO 3166-1 alpha-3 (`DEU`,
 * `USA`), the provider's `calledCountry`. The number's country comes from libphonenumber-js
 * (Google's numbering plan metadata: +1 and +7 are told apart by area code, +44 by Crown
 * Dependency); a number whose country code is known but whose area is not counts for the main
 * country of its code (+1 → USA); non-geographic codes (+800, +881 …) and numbers that are no
 * E.164 give `XXX` (ISO's "unknown"), so that a report groups them instead of losing them.
 */
import { parsePhoneNumberFromString } from "libphonenumber-js/min";
import metadata from "libphonenumber-js/metadata.min.json";

/** ISO 3166-1 alpha-2 → alpha-3, with Kosovo's user-assigned XKX and the numbering plan's AC and TA (parts of Saint Helena). */
const ALPHA3: Readonly<Record<string, string>> = {
  AC: "SHN", AD: "AND", AE: "ARE", AF: "AFG", AG: "ATG", AI: "AIA", AL: "ALB", AM: "ARM", AO: "AGO", AQ: "ATA", AR: "ARG", AS: "ASM", AT: "AUT",
  AU: "AUS", AW: "ABW", AX: "ALA", AZ: "AZE", BA: "BIH", BB: "BRB", BD: "BGD", BE: "BEL", BF: "BFA", BG: "BGR", BH: "BHR", BI: "BDI", BJ: "BEN",
  BL: "BLM", BM: "BMU", BN: "BRN", BO: "BOL", BQ: "BES", BR: "BRA", BS: "BHS", BT: "BTN", BV: "BVT", BW: "BWA", BY: "BLR", BZ: "BLZ", CA: "CAN",
  CC: "CCK", CD: "COD", CF: "CAF", CG: "COG", CH: "CHE", CI: "CIV", CK: "COK", CL: "CHL", CM: "CMR", CN: "CHN", CO: "COL", CR: "CRI", CU: "CUB",
  CV: "CPV", CW: "CUW", CX: "CXR", CY: "CYP", CZ: "CZE", DE: "DEU", DJ: "DJI", DK: "DNK", DM: "DMA", DO: "DOM", DZ: "DZA", EC: "ECU", EE: "EST",
  EG: "EGY", EH: "ESH", ER: "ERI", ES: "ESP", ET: "ETH", FI: "FIN", FJ: "FJI", FK: "FLK", FM: "FSM", FO: "FRO", FR: "FRA", GA: "GAB", GB: "GBR",
  GD: "GRD", GE: "GEO", GF: "GUF", GG: "GGY", GH: "GHA", GI: "GIB", GL: "GRL", GM: "GMB", GN: "GIN", GP: "GLP", GQ: "GNQ", GR: "GRC", GS: "SGS",
  GT: "GTM", GU: "GUM", GW: "GNB", GY: "GUY", HK: "HKG", HM: "HMD", HN: "HND", HR: "HRV", HT: "HTI", HU: "HUN", ID: "IDN", IE: "IRL", IL: "ISR",
  IM: "IMN", IN: "IND", IO: "IOT", IQ: "IRQ", IR: "IRN", IS: "ISL", IT: "ITA", JE: "JEY", JM: "JAM", JO: "JOR", JP: "JPN", KE: "KEN", KG: "KGZ",
  KH: "KHM", KI: "KIR", KM: "COM", KN: "KNA", KP: "PRK", KR: "KOR", KW: "KWT", KY: "CYM", KZ: "KAZ", LA: "LAO", LB: "LBN", LC: "LCA", LI: "LIE",
  LK: "LKA", LR: "LBR", LS: "LSO", LT: "LTU", LU: "LUX", LV: "LVA", LY: "LBY", MA: "MAR", MC: "MCO", MD: "MDA", ME: "MNE", MF: "MAF", MG: "MDG",
  MH: "MHL", MK: "MKD", ML: "MLI", MM: "MMR", MN: "MNG", MO: "MAC", MP: "MNP", MQ: "MTQ", MR: "MRT", MS: "MSR", MT: "MLT", MU: "MUS", MV: "MDV",
  MW: "MWI", MX: "MEX", MY: "MYS", MZ: "MOZ", NA: "NAM", NC: "NCL", NE: "NER", NF: "NFK", NG: "NGA", NI: "NIC", NL: "NLD", NO: "NOR", NP: "NPL",
  NR: "NRU", NU: "NIU", NZ: "NZL", OM: "OMN", PA: "PAN", PE: "PER", PF: "PYF", PG: "PNG", PH: "PHL", PK: "PAK", PL: "POL", PM: "SPM", PN: "PCN",
  PR: "PRI", PS: "PSE", PT: "PRT", PW: "PLW", PY: "PRY", QA: "QAT", RE: "REU", RO: "ROU", RS: "SRB", RU: "RUS", RW: "RWA", SA: "SAU", SB: "SLB",
  SC: "SYC", SD: "SDN", SE: "SWE", SG: "SGP", SH: "SHN", SI: "SVN", SJ: "SJM", SK: "SVK", SL: "SLE", SM: "SMR", SN: "SEN", SO: "SOM", SR: "SUR",
  SS: "SSD", ST: "STP", SV: "SLV", SX: "SXM", SY: "SYR", SZ: "SWZ", TA: "SHN", TC: "TCA", TD: "TCD", TF: "ATF", TG: "TGO", TH: "THA", TJ: "TJK",
  TK: "TKL", TL: "TLS", TM: "TKM", TN: "TUN", TO: "TON", TR: "TUR", TT: "TTO", TV: "TUV", TW: "TWN", TZ: "TZA", UA: "UKR", UG: "UGA", UM: "UMI",
  US: "USA", UY: "URY", UZ: "UZB", VA: "VAT", VC: "VCT", VE: "VEN", VG: "VGB", VI: "VIR", VN: "VNM", VU: "VUT", WF: "WLF", WS: "WSM", XK: "XKX",
  YE: "YEM", YT: "MYT", ZA: "ZAF", ZM: "ZMB", ZW: "ZWE",
};

/** ISO's code for "unknown": non-geographic numbers and anything that is no E.164 number. */
export const UNKNOWN_COUNTRY = "XXX";

/** The alpha-3 code of an alpha-2 one, or XXX. */
export function alpha3(alpha2: string | undefined): string {
  return (alpha2 && ALPHA3[alpha2.toUpperCase()]) || UNKNOWN_COUNTRY;
}

const callingCodes = (metadata as { country_calling_codes: Record<string, string[]> }).country_calling_codes;
const cache = new Map<string, string>();

/** The country (ISO alpha-3) of an E.164 number (`+4989…`), XXX when it has none. */
export function countryOfNumber(e164: string | null | undefined): string {
  if (!e164) return UNKNOWN_COUNTRY;
  const hit = cache.get(e164);
  if (hit !== undefined) return hit;
  const parsed = parsePhoneNumberFromString(e164.startsWith("+") ? e164 : `+${e164}`);
  let country: string | undefined = parsed?.country;
  if (!country && parsed?.countryCallingCode) country = callingCodes[parsed.countryCallingCode]?.[0];
  const code = alpha3(country);
  if (cache.size >= 50_000) cache.clear();
  cache.set(e164, code);
  return code;
}

/** The alpha-3 code of a region's home country (DE → DEU, US → USA): what a call counts as national against. */
export function homeCountryOfRegion(region: string): string {
  return alpha3(region);
}
