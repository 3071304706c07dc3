/**
 * T.30 facsimile control field (FCF) values as SpanDSP reports them (`t30_fcf.h`): the octet is
 * bit-reversed relative to the order on the line and in T.38 IFP hdlc-data (DIS is 0x80 here,
 * `0x01` in ITU-T T.30 Table 2's bit notation). Frames a caller sends in reply to a DIS carry the
 * "X" bit, the lowest bit here (DCS is 0x82, or 0x83 from the calling terminal); compare with
 * `isFcf()`, which ignores it.
 *
 * Only the frames a sender meets are listed; the engine's events also carry SpanDSP's own name
 * for every frame (`t30_frametype()`).
 */
export const Fcf = {
  DIS: 0x80,
  CSI: 0x40,
  NSF: 0x20,
  DTC: 0x81,
  DCS: 0x82,
  TSI: 0x42,
  NSS: 0x22,
  CFR: 0x84,
  FTT: 0x44,
  CTC: 0x12,
  CTR: 0xc4,
  EOM: 0x8e,
  MPS: 0x4e,
  EOP: 0x2e,
  PPS: 0xbe,
  EOR: 0xce,
  RR: 0x6e,
  MCF: 0x8c,
  RTP: 0xcc,
  RTN: 0x4c,
  PIP: 0xac,
  PIN: 0x2c,
  PPR: 0xbc,
  RNR: 0xec,
  ERR: 0x1c,
  DCN: 0xfa,
  CRP: 0x1a,
} as const;

export type FcfName = keyof typeof Fcf;

/** Frames without an X bit: in these the lowest bit tells DIS from DTC, CSI from CIG, NSF from NSC. */
const EXACT: ReadonlySet<FcfName> = new Set<FcfName>(["DIS", "CSI", "NSF", "DTC"]);

/** Whether `fcf` is the frame `name`, ignoring the X bit where the frame has one. */
export function isFcf(fcf: number, name: FcfName): boolean {
  return EXACT.has(name) ? fcf === Fcf[name] : (fcf & 0xfe) === Fcf[name];
}
