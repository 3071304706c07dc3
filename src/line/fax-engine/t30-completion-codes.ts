/**
 * T.30 phase E completion codes: SpanDSP's `T30_ERR_*` enum (spandsp 0.0.6 `t30.h`), with the
 * names spelled as there, so that operators can search for them, and the text
 * `t30_completion_code_to_str()` gives. The order and values are the enum's; the groups are the
 * header's own comments. test/interop/spandsp-engine.test.ts checks this table against the
 * installed header and library, so it cannot drift from them.
 *
 * A completion code is data: the engine reports it at phase E and the line turns it into a
 * failure reason (errors/failure-reasons.ts); `T30_ERR_OK` is the only success.
 */
export const T30_ERR = {
  T30_ERR_OK: { code: 0, text: "OK" },
  // Link problems
  T30_ERR_CEDTONE: { code: 1, text: "The CED tone exceeded 5s" },
  T30_ERR_T0_EXPIRED: { code: 2, text: "Timed out waiting for initial communication" },
  T30_ERR_T1_EXPIRED: { code: 3, text: "Timed out waiting for the first message" },
  T30_ERR_T3_EXPIRED: { code: 4, text: "Timed out waiting for procedural interrupt" },
  T30_ERR_HDLC_CARRIER: { code: 5, text: "The HDLC carrier did not stop in a timely manner" },
  T30_ERR_CANNOT_TRAIN: { code: 6, text: "Failed to train with any of the compatible modems" },
  T30_ERR_OPER_INT_FAIL: { code: 7, text: "Operator intervention failed" },
  T30_ERR_INCOMPATIBLE: { code: 8, text: "Far end is not compatible" },
  T30_ERR_RX_INCAPABLE: { code: 9, text: "Far end is not able to receive" },
  T30_ERR_TX_INCAPABLE: { code: 10, text: "Far end is not able to transmit" },
  T30_ERR_NORESSUPPORT: { code: 11, text: "Far end cannot receive at the resolution of the image" },
  T30_ERR_NOSIZESUPPORT: { code: 12, text: "Far end cannot receive at the size of image" },
  T30_ERR_UNEXPECTED: { code: 13, text: "Unexpected message received" },
  // Phase E status values returned to a transmitter
  T30_ERR_TX_BADDCS: { code: 14, text: "Received bad response to DCS or training" },
  T30_ERR_TX_BADPG: { code: 15, text: "Received a DCN from remote after sending a page" },
  T30_ERR_TX_ECMPHD: { code: 16, text: "Invalid ECM response received from receiver" },
  T30_ERR_TX_GOTDCN: { code: 17, text: "Received a DCN while waiting for a DIS" },
  T30_ERR_TX_INVALRSP: { code: 18, text: "Invalid response after sending a page" },
  T30_ERR_TX_NODIS: { code: 19, text: "Received other than DIS while waiting for DIS" },
  T30_ERR_TX_PHBDEAD: { code: 20, text: "Received no response to DCS or TCF" },
  T30_ERR_TX_PHDDEAD: { code: 21, text: "No response after sending a page" },
  T30_ERR_TX_T5EXP: { code: 22, text: "Timed out waiting for receiver ready (ECM mode)" },
  // Phase E status values returned to a receiver
  T30_ERR_RX_ECMPHD: { code: 23, text: "Invalid ECM response received from transmitter" },
  T30_ERR_RX_GOTDCS: { code: 24, text: "DCS received while waiting for DTC" },
  T30_ERR_RX_INVALCMD: { code: 25, text: "Unexpected command after page received" },
  T30_ERR_RX_NOCARRIER: { code: 26, text: "Carrier lost during fax receive" },
  T30_ERR_RX_NOEOL: { code: 27, text: "Timed out while waiting for EOL (end Of line)" },
  T30_ERR_RX_NOFAX: { code: 28, text: "Timed out while waiting for first line" },
  T30_ERR_RX_T2EXPDCN: { code: 29, text: "Timer T2 expired while waiting for DCN" },
  T30_ERR_RX_T2EXPD: { code: 30, text: "Timer T2 expired while waiting for phase D" },
  T30_ERR_RX_T2EXPFAX: { code: 31, text: "Timer T2 expired while waiting for fax page" },
  T30_ERR_RX_T2EXPMPS: { code: 32, text: "Timer T2 expired while waiting for next fax page" },
  T30_ERR_RX_T2EXPRR: { code: 33, text: "Timer T2 expired while waiting for RR command" },
  T30_ERR_RX_T2EXP: { code: 34, text: "Timer T2 expired while waiting for NSS, DCS or MCF" },
  T30_ERR_RX_DCNWHY: { code: 35, text: "Unexpected DCN while waiting for DCS or DIS" },
  T30_ERR_RX_DCNDATA: { code: 36, text: "Unexpected DCN while waiting for image data" },
  T30_ERR_RX_DCNFAX: { code: 37, text: "Unexpected DCN while waiting for EOM, EOP or MPS" },
  T30_ERR_RX_DCNPHD: { code: 38, text: "Unexpected DCN after EOM or MPS sequence" },
  T30_ERR_RX_DCNRRD: { code: 39, text: "Unexpected DCN after RR/RNR sequence" },
  T30_ERR_RX_DCNNORTN: { code: 40, text: "Unexpected DCN after requested retransmission" },
  // TIFF file problems
  T30_ERR_FILEERROR: { code: 41, text: "TIFF/F file cannot be opened" },
  T30_ERR_NOPAGE: { code: 42, text: "TIFF/F page not found" },
  T30_ERR_BADTIFF: { code: 43, text: "TIFF/F format is not compatible" },
  T30_ERR_BADPAGE: { code: 44, text: "TIFF/F page number tag missing" },
  T30_ERR_BADTAG: { code: 45, text: "Incorrect values for TIFF/F tags" },
  T30_ERR_BADTIFFHDR: { code: 46, text: "Bad TIFF/F header - incorrect values in fields" },
  T30_ERR_NOMEM: { code: 47, text: "Cannot allocate memory for more pages" },
  // General problems
  T30_ERR_RETRYDCN: { code: 48, text: "Disconnected after permitted retries" },
  T30_ERR_CALLDROPPED: { code: 49, text: "The call dropped prematurely" },
  // Feature negotiation issues
  T30_ERR_NOPOLL: { code: 50, text: "Poll not accepted" },
  T30_ERR_IDENT_UNACCEPTABLE: { code: 51, text: "Ident not accepted" },
  T30_ERR_SUB_UNACCEPTABLE: { code: 52, text: "Sub-address not accepted" },
  T30_ERR_SEP_UNACCEPTABLE: { code: 53, text: "Selective polling address not accepted" },
  T30_ERR_PSA_UNACCEPTABLE: { code: 54, text: "Polled sub-address not accepted" },
  T30_ERR_SID_UNACCEPTABLE: { code: 55, text: "Sender identification not accepted" },
  T30_ERR_PWD_UNACCEPTABLE: { code: 56, text: "Password not accepted" },
  T30_ERR_TSA_UNACCEPTABLE: { code: 57, text: "Transmitting subscriber internet address not accepted" },
  T30_ERR_IRA_UNACCEPTABLE: { code: 58, text: "Internet routing address not accepted" },
  T30_ERR_CIA_UNACCEPTABLE: { code: 59, text: "Calling subscriber internet address not accepted" },
  T30_ERR_ISP_UNACCEPTABLE: { code: 60, text: "Internet selective polling address not accepted" },
  T30_ERR_CSA_UNACCEPTABLE: { code: 61, text: "Called subscriber internet address not accepted" },
} as const satisfies Record<string, { code: number; text: string }>;

export type T30ErrName = keyof typeof T30_ERR;

const NAME_BY_CODE: ReadonlyMap<number, T30ErrName> = new Map(
  (Object.keys(T30_ERR) as T30ErrName[]).map((name) => [T30_ERR[name].code, name]),
);

/** The `T30_ERR_*` name of a completion code, or `T30_ERR_UNKNOWN_<code>` for one this table lacks. */
export function t30ErrName(code: number): T30ErrName | `T30_ERR_UNKNOWN_${number}` {
  return NAME_BY_CODE.get(code) ?? `T30_ERR_UNKNOWN_${code}`;
}

/**
 * The completion code as a line reports it in `rawCause`, name first:
 * `T30_ERR_TX_GOTDCN: Received a DCN while waiting for a DIS`.
 */
export function describeT30Completion(code: number): string {
  const name = NAME_BY_CODE.get(code);
  return name === undefined ? `T30_ERR_UNKNOWN_${code}: unknown completion code` : `${name}: ${T30_ERR[name].text}`;
}
