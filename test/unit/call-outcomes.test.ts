/**
 * Call outcomes, table-driven: SIP final responses of every class (and the Q.850 causes that
 * refine them), to the INVITE and to the T.38 re-INVITE; every T30_ERR_* completion code of
 * SpanDSP's t30.h, by name and by number, at three points of a call; Faxline's own timers.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { FailureReasons, type FailureReasonCode } from "../../src/errors/failure-reasons.ts";
import { T30_ERR, type T30ErrName } from "../../src/line/fax-engine/t30-completion-codes.ts";
import { TEST_NUMBERS } from "../../src/line/test-numbers.ts";
import { requirePeer } from "../support/required-peers.ts";
import {
  classifySipResponse,
  describeSipResponse,
  describeT30,
  outcomeOfCall,
  Q850_CAUSE_RULES,
  SIP_STATUS_RULES,
  T30_COMPLETION_RULES,
  toAttemptOutcome,
  type CallEnd,
  type SipResponseContext,
  type SipVerdict,
} from "../../src/line/outcomes/call-outcomes.ts";

const INVITE: SipResponseContext = { request: "invite", credentialsSent: true };
const REINVITE: SipResponseContext = { request: "reinvite", credentialsSent: true };

type Expect = FailureReasonCode | Exclude<SipVerdict["kind"], "failed">;
const kindOrReason = (v: SipVerdict): Expect => (v.kind === "failed" ? v.reasonCode : v.kind);

describe("call outcomes: SIP responses to the INVITE", () => {
  // [status, expected, context]: one or more codes of every class, the unknown ones included.
  const table: [number, Expect, Partial<SipResponseContext>?][] = [
    [100, "provisional"], [180, "provisional"], [183, "provisional"], [199, "provisional"],
    [200, "answered"], [202, "answered"], [299, "answered"],
    [300, "call_failed"], [301, "call_failed"], [302, "call_failed"], [380, "call_failed"], [399, "call_failed"],
    [400, "call_failed"],
    [401, "challenge", { credentialsSent: false }], [401, "trunk_rejected"],
    [402, "trunk_rejected"], [403, "trunk_rejected"], [404, "invalid_number"], [405, "call_failed"], [406, "call_failed"],
    [407, "challenge", { credentialsSent: false }], [407, "trunk_rejected"],
    [408, "no_answer"], [410, "invalid_number"], [413, "call_failed"], [414, "call_failed"],
    [415, "call_failed"], [415, "t38_fallback", { offeredT38Only: true }],
    [416, "call_failed"], [420, "call_failed"], [421, "call_failed"], [422, "call_failed"], [423, "call_failed"],
    [433, "trunk_rejected"], [480, "no_answer"], [481, "call_failed"], [482, "call_failed"], [483, "call_failed"],
    [484, "invalid_number"], [485, "invalid_number"], [486, "line_busy"],
    [487, "no_answer", { cancelledByUs: true }], [487, "call_failed"],
    [488, "call_failed"], [488, "t38_fallback", { offeredT38Only: true }],
    [491, "call_failed"], [493, "call_failed"], [494, "call_failed"], [499, "call_failed"],
    [500, "call_failed"], [501, "call_failed"], [502, "call_failed"], [503, "call_failed"], [504, "call_failed"],
    [505, "call_failed"], [513, "call_failed"], [580, "call_failed"], [599, "call_failed"],
    [600, "line_busy"], [603, "call_rejected"], [604, "invalid_number"],
    [606, "call_failed"], [606, "t38_fallback", { offeredT38Only: true }], [607, "call_rejected"], [608, "call_rejected"], [699, "call_failed"],
  ];
  for (const [status, expected, ctx] of table) {
    it(`${status}${ctx ? ` ${JSON.stringify(ctx)}` : ""} → ${expected}`, () => {
      assert.equal(kindOrReason(classifySipResponse({ status }, { ...INVITE, ...ctx })), expected);
    });
  }

  it("has a rule or a class default for every final code", () => {
    for (let status = 300; status < 700; status++) {
      const v = classifySipResponse({ status }, INVITE);
      assert.ok(v.kind === "failed" || v.kind === "challenge", `${status}: ${v.kind}`);
    }
    for (const code of Object.values(SIP_STATUS_RULES)) assert.ok(code in FailureReasons);
  });

  it("refuses what is no SIP status", () => {
    assert.throws(() => classifySipResponse({ status: 99 }, INVITE), RangeError);
    assert.throws(() => classifySipResponse({ status: 700 }, INVITE), RangeError);
  });
});

describe("call outcomes: SIP responses to the T.38 re-INVITE", () => {
  const table: [number, Expect, Partial<SipResponseContext>?][] = [
    [100, "provisional"], [200, "answered"],
    [302, "t38_fallback"], [400, "t38_fallback"], [401, "challenge", { credentialsSent: false }], [403, "t38_fallback"],
    [408, "dialog_ended"], [415, "t38_fallback"], [420, "t38_fallback"], [481, "dialog_ended"], [486, "t38_fallback"],
    [488, "t38_fallback"], [491, "retry_later"], [500, "t38_fallback"], [501, "t38_fallback"], [503, "t38_fallback"],
    [603, "t38_fallback"], [606, "t38_fallback"],
  ];
  for (const [status, expected, ctx] of table) {
    it(`${status} → ${expected}`, () => {
      assert.equal(kindOrReason(classifySipResponse({ status }, { ...REINVITE, ...ctx })), expected);
    });
  }
});

describe("call outcomes: Q.850 causes", () => {
  const table: [number, number, FailureReasonCode][] = [
    [480, 17, "line_busy"],
    [480, 18, "no_answer"],
    [480, 19, "no_answer"],
    [480, 16, "no_answer"], // normal clearing decides nothing: the SIP rule stands
    [404, 1, "invalid_number"],
    [404, 31, "invalid_number"],
    [403, 21, "call_rejected"],
    [503, 34, "call_failed"],
    [503, 42, "call_failed"],
    [500, 88, "not_a_fax"],
    [403, 57, "trunk_rejected"],
    [500, 28, "invalid_number"],
    [410, 22, "invalid_number"],
    [504, 102, "no_answer"],
    [486, 999, "line_busy"], // unknown cause: the SIP rule stands
  ];
  for (const [status, cause, expected] of table) {
    it(`${status} with cause ${cause} → ${expected}`, () => {
      assert.equal(kindOrReason(classifySipResponse({ status, q850Cause: cause }, INVITE)), expected);
    });
  }

  it("leaves our own CANCEL's 487 a ring timeout whatever the cause", () => {
    assert.equal(kindOrReason(classifySipResponse({ status: 487, q850Cause: 41 }, { ...INVITE, cancelledByUs: true })), "no_answer");
  });

  it("maps every listed cause to a known reason or to none", () => {
    for (const [cause, r] of Object.entries(Q850_CAUSE_RULES)) assert.ok(r.reasonCode === null || r.reasonCode in FailureReasons, cause);
  });

  it("writes raw causes as the test line does", () => {
    assert.equal(describeSipResponse({ status: 486, q850Cause: 17 }), "SIP 486 Busy Here (Q.850 cause 17 user busy)");
    assert.equal(describeSipResponse({ status: 404, q850Cause: 1 }), "SIP 404 Not Found (Q.850 cause 1 unallocated number)");
    assert.equal(describeSipResponse({ status: 503 }), "SIP 503 Service Unavailable");
    assert.equal(describeSipResponse({ status: 503, reasonPhrase: "Out of capacity" }), "SIP 503 Out of capacity");
    assert.equal(describeSipResponse({ status: 499 }), "SIP 499");
    assert.equal(describeSipResponse({ status: 480, q850Cause: 250 }), "SIP 480 Temporarily Unavailable (Q.850 cause 250)");
  });
});

describe("call outcomes: every T30_ERR completion code", () => {
  // [name, number, no progress, transfer begun with 0 of 3 pages confirmed, 1 of 3 confirmed]
  const NF = "fax_negotiation_failed", TF = "transmission_failed", PT = "partial_transmission";
  const FD = "fax_disconnected", RD = "remote_disconnect", TO = "fax_timeout";
  const NR = "fax_not_receiving", IC = "fax_incompatible", IE = "fax_image_error";
  const table: [T30ErrName, number, FailureReasonCode, FailureReasonCode, FailureReasonCode][] = [
    ["T30_ERR_CEDTONE", 1, NF, TF, PT],
    ["T30_ERR_T0_EXPIRED", 2, TO, TO, TO],
    ["T30_ERR_T1_EXPIRED", 3, TO, TO, TO],
    ["T30_ERR_T3_EXPIRED", 4, NF, TF, PT],
    ["T30_ERR_HDLC_CARRIER", 5, NF, TF, PT],
    ["T30_ERR_CANNOT_TRAIN", 6, NF, TF, PT],
    ["T30_ERR_OPER_INT_FAIL", 7, NF, TF, PT],
    ["T30_ERR_INCOMPATIBLE", 8, NF, TF, PT],
    ["T30_ERR_RX_INCAPABLE", 9, NR, NR, NR],
    ["T30_ERR_TX_INCAPABLE", 10, IC, IC, IC],
    ["T30_ERR_NORESSUPPORT", 11, IC, IC, IC],
    ["T30_ERR_NOSIZESUPPORT", 12, IC, IC, IC],
    ["T30_ERR_UNEXPECTED", 13, NF, TF, PT],
    ["T30_ERR_TX_BADDCS", 14, NF, TF, PT],
    ["T30_ERR_TX_BADPG", 15, RD, RD, RD],
    ["T30_ERR_TX_ECMPHD", 16, TF, TF, PT],
    ["T30_ERR_TX_GOTDCN", 17, FD, RD, RD],
    ["T30_ERR_TX_INVALRSP", 18, TF, TF, PT],
    ["T30_ERR_TX_NODIS", 19, NF, TF, PT],
    ["T30_ERR_TX_PHBDEAD", 20, NF, TF, PT],
    ["T30_ERR_TX_PHDDEAD", 21, TF, TF, PT],
    ["T30_ERR_TX_T5EXP", 22, TF, TF, PT],
    ["T30_ERR_RX_ECMPHD", 23, TF, TF, PT],
    ["T30_ERR_RX_GOTDCS", 24, NF, TF, PT],
    ["T30_ERR_RX_INVALCMD", 25, TF, TF, PT],
    ["T30_ERR_RX_NOCARRIER", 26, TF, TF, PT],
    ["T30_ERR_RX_NOEOL", 27, TF, TF, PT],
    ["T30_ERR_RX_NOFAX", 28, TF, TF, PT],
    ["T30_ERR_RX_T2EXPDCN", 29, TF, TF, PT],
    ["T30_ERR_RX_T2EXPD", 30, TF, TF, PT],
    ["T30_ERR_RX_T2EXPFAX", 31, TF, TF, PT],
    ["T30_ERR_RX_T2EXPMPS", 32, TF, TF, PT],
    ["T30_ERR_RX_T2EXPRR", 33, TF, TF, PT],
    ["T30_ERR_RX_T2EXP", 34, NF, TF, PT],
    ["T30_ERR_RX_DCNWHY", 35, FD, RD, RD],
    ["T30_ERR_RX_DCNDATA", 36, RD, RD, RD],
    ["T30_ERR_RX_DCNFAX", 37, RD, RD, RD],
    ["T30_ERR_RX_DCNPHD", 38, RD, RD, RD],
    ["T30_ERR_RX_DCNRRD", 39, RD, RD, RD],
    ["T30_ERR_RX_DCNNORTN", 40, RD, RD, RD],
    ["T30_ERR_FILEERROR", 41, IE, IE, IE],
    ["T30_ERR_NOPAGE", 42, IE, IE, IE],
    ["T30_ERR_BADTIFF", 43, IE, IE, IE],
    ["T30_ERR_BADPAGE", 44, IE, IE, IE],
    ["T30_ERR_BADTAG", 45, IE, IE, IE],
    ["T30_ERR_BADTIFFHDR", 46, IE, IE, IE],
    ["T30_ERR_NOMEM", 47, IE, IE, IE],
    ["T30_ERR_RETRYDCN", 48, TF, TF, PT],
    ["T30_ERR_CALLDROPPED", 49, FD, RD, RD],
    ["T30_ERR_NOPOLL", 50, IC, IC, IC],
    ["T30_ERR_IDENT_UNACCEPTABLE", 51, IC, IC, IC],
    ["T30_ERR_SUB_UNACCEPTABLE", 52, IC, IC, IC],
    ["T30_ERR_SEP_UNACCEPTABLE", 53, IC, IC, IC],
    ["T30_ERR_PSA_UNACCEPTABLE", 54, IC, IC, IC],
    ["T30_ERR_SID_UNACCEPTABLE", 55, IC, IC, IC],
    ["T30_ERR_PWD_UNACCEPTABLE", 56, IC, IC, IC],
    ["T30_ERR_TSA_UNACCEPTABLE", 57, IC, IC, IC],
    ["T30_ERR_IRA_UNACCEPTABLE", 58, IC, IC, IC],
    ["T30_ERR_CIA_UNACCEPTABLE", 59, IC, IC, IC],
    ["T30_ERR_ISP_UNACCEPTABLE", 60, IC, IC, IC],
    ["T30_ERR_CSA_UNACCEPTABLE", 61, IC, IC, IC],
  ];

  const progressions = [
    { label: "no progress", progress: { pagesConfirmed: 0 } },
    { label: "transfer begun, 0/3 confirmed", progress: { disReceived: true, transferStarted: true, pagesConfirmed: 0 } },
    { label: "1/3 confirmed", progress: { disReceived: true, transferStarted: true, pagesConfirmed: 1 } },
  ];

  it("the table here covers every code of the engine's T30_ERR table and of the rules, with the same numbers", () => {
    const names = table.map((r) => r[0]).concat("T30_ERR_OK");
    assert.deepEqual([...names].sort(), Object.keys(T30_ERR).sort());
    assert.deepEqual([...names].sort(), Object.keys(T30_COMPLETION_RULES).sort());
    for (const [name, code] of table) assert.equal(T30_ERR[name].code, code, name);
  });

  it("covers every T30_ERR_* of the installed spandsp t30.h, by name and number", () => {
    requirePeer("spandsp-headers");
    const header = readFileSync("/usr/include/spandsp/t30.h", "utf8");
    const body = /enum\s*\{([^}]*T30_ERR_OK[^}]*)\}/.exec(header)![1]!;
    const names = [...body.matchAll(/\b(T30_ERR_[A-Z0-9_]+)\b(\s*=\s*(\d+))?/g)];
    let next = 0;
    const fromHeader = names.map((m) => {
      const n = m[3] === undefined ? next : Number(m[3]);
      next = n + 1;
      return [m[1]!, n] as const;
    });
    assert.ok(fromHeader.length >= 62);
    for (const [name, code] of fromHeader) {
      assert.ok(Object.hasOwn(T30_COMPLETION_RULES, name), `${name} has no rule`);
      assert.equal(T30_ERR[name as T30ErrName].code, code, `${name} number`);
      const byNumber = outcomeOfCall({ kind: "fax_completed", completionCode: code, progress: { pagesConfirmed: 0 } }, { pagesTotal: 3, transport: "t38" });
      const byName = outcomeOfCall({ kind: "fax_completed", completionCode: name as T30ErrName, progress: { pagesConfirmed: 0 } }, { pagesTotal: 3, transport: "t38" });
      assert.deepEqual(byNumber, byName, name);
    }
  });

  for (const [name, code, ...expected] of table) {
    it(`${name} (${code})`, () => {
      progressions.forEach(({ label, progress }, i) => {
        for (const completionCode of [name, code] as const) {
          const o = outcomeOfCall({ kind: "fax_completed", completionCode, progress }, { pagesTotal: 3, transport: "g711" });
          assert.equal(o.result, "failed", `${label}`);
          assert.equal(o.reasonCode, expected[i], `${name} ${label}`);
          const reason = FailureReasons[o.reasonCode!];
          assert.equal(o.status, reason.status);
          assert.equal(o.retryClass, reason.retryClass);
          assert.equal(o.category, reason.category);
          assert.deepEqual(o.t30, { code, name });
          assert.equal(o.pagesDelivered, progress.pagesConfirmed);
          assert.ok(o.rawCause!.startsWith(`${name}: ${T30_ERR[name].text}`), o.rawCause!);
          assert.ok(o.rawCause!.includes(`${progress.pagesConfirmed} of 3 pages confirmed`));
          assert.equal(o.advancesLadder, reason.retryClass === "protocol", `${name} ${label} ladder`);
        }
      });
      // Every page confirmed: delivered, whatever went wrong afterwards, unless our own image failed.
      const all = outcomeOfCall({ kind: "fax_completed", completionCode: code, progress: { transferStarted: true, pagesConfirmed: 3 } }, { pagesTotal: 3, transport: "t38" });
      if (expected[0] === IE) assert.equal(all.reasonCode, IE);
      else {
        assert.equal(all.result, "delivered");
        assert.equal(all.status, "OK");
        assert.equal(all.pagesDelivered, 3);
        assert.match(all.rawCause!, /after all pages were confirmed/);
      }
    });
  }

  it("T30_ERR_OK with every page confirmed is delivered; with pages missing it is not", () => {
    const ok = outcomeOfCall({ kind: "fax_completed", completionCode: 0, progress: { transferStarted: true, pagesConfirmed: 2 } }, { pagesTotal: 2, transport: "t38" });
    assert.deepEqual(
      { result: ok.result, status: ok.status, reasonCode: ok.reasonCode, rawCause: ok.rawCause, pages: ok.pagesDelivered, ladder: ok.advancesLadder },
      { result: "delivered", status: "OK", reasonCode: null, rawCause: null, pages: 2, ladder: false },
    );
    const short = outcomeOfCall({ kind: "fax_completed", completionCode: "T30_ERR_OK", progress: { transferStarted: true, pagesConfirmed: 1 } }, { pagesTotal: 2, transport: "t38" });
    assert.equal(short.reasonCode, "partial_transmission");
    assert.match(short.rawCause!, /^T30_ERR_OK: OK, but only 1 of 2 pages confirmed/);
    const none = outcomeOfCall({ kind: "fax_completed", completionCode: "T30_ERR_OK", progress: { pagesConfirmed: 0 } }, { pagesTotal: 2, transport: "t38" });
    assert.equal(none.reasonCode, "transmission_failed");
  });

  it("reads a code the table lacks as a protocol failure", () => {
    const o = outcomeOfCall({ kind: "fax_completed", completionCode: 99, progress: { pagesConfirmed: 0 } }, { pagesTotal: 1, transport: "t38" });
    assert.equal(o.reasonCode, "fax_negotiation_failed");
    assert.deepEqual(o.t30, { code: 99, name: "T30_ERR_UNKNOWN_99" });
    assert.match(o.rawCause!, /^T30_ERR_UNKNOWN_99: unknown completion code/);
    assert.equal(describeT30(17), "T30_ERR_TX_GOTDCN: Received a DCN while waiting for a DIS");
  });

  it("steps down the ladder after silence on T.38, not on G.711", () => {
    const end: CallEnd = { kind: "fax_completed", completionCode: "T30_ERR_T0_EXPIRED", progress: { pagesConfirmed: 0 } };
    assert.equal(outcomeOfCall(end, { pagesTotal: 1, transport: "t38" }).advancesLadder, true);
    assert.equal(outcomeOfCall(end, { pagesTotal: 1, transport: "g711" }).advancesLadder, false);
  });

  it("adds what SIP said to the engine's cause", () => {
    const o = outcomeOfCall(
      { kind: "fax_completed", completionCode: "T30_ERR_CALLDROPPED", progress: { transferStarted: true, pagesConfirmed: 1 }, sipCause: "BYE from the far end (Q.850 cause 16)" },
      { pagesTotal: 3, transport: "t38" },
    );
    assert.equal(o.rawCause, "T30_ERR_CALLDROPPED: The call dropped prematurely; BYE from the far end (Q.850 cause 16); 1 of 3 pages confirmed");
  });

  it("agrees with the test line's scripted outcomes", () => {
    for (const t of TEST_NUMBERS) {
      for (const n of [1, 2, 3]) {
        const script = t.script(n);
        if (script.kind === "deliver" || !script.rawCause.startsWith("T30_ERR_")) continue;
        const name = script.rawCause.split(":")[0] as T30ErrName;
        const progress = script.kind === "partial" ? { transferStarted: true, pagesConfirmed: 1 } : { pagesConfirmed: 0 };
        const o = outcomeOfCall({ kind: "fax_completed", completionCode: name, progress }, { pagesTotal: 3, transport: "t38" });
        assert.equal(o.reasonCode, script.reasonCode, `${t.number}: ${script.rawCause}`);
      }
    }
  });
});

describe("call outcomes: Faxline's timers and the media layer", () => {
  const ctx = { pagesTotal: 2, transport: null };

  it("a ring timeout is RING_TO with the test line's raw cause", () => {
    const o = outcomeOfCall({ kind: "ring_timeout", ringSeconds: 55, response: { status: 487 } }, ctx);
    assert.equal(o.reasonCode, "no_answer");
    assert.equal(o.status, "RING_TO");
    assert.equal(o.rawCause, "CANCEL after 55 s of ringing (SIP 487 Request Terminated)");
    assert.equal(o.sipStatus, 487);
    assert.equal(o.advancesLadder, false);
    assert.match(outcomeOfCall({ kind: "ring_timeout", ringSeconds: 55 }, ctx).rawCause!, /no 487 followed/);
  });

  it("a rejected INVITE keeps the SIP status and Q.850 cause, and never moves the ladder", () => {
    const busy = outcomeOfCall({ kind: "rejected", response: { status: 486, q850Cause: 17 } }, ctx);
    assert.deepEqual(
      { r: busy.reasonCode, s: busy.status, sip: busy.sipStatus, q: busy.q850Cause, raw: busy.rawCause, l: busy.advancesLadder },
      { r: "line_busy", s: "BUSY", sip: 486, q: 17, raw: "SIP 486 Busy Here (Q.850 cause 17 user busy)", l: false },
    );
    assert.equal(outcomeOfCall({ kind: "rejected", response: { status: 487 }, cancelledByUs: true }, ctx).status, "RING_TO");
    assert.equal(outcomeOfCall({ kind: "rejected", response: { status: 404 } }, ctx).status, "WRONG_NUMBER");
    assert.equal(outcomeOfCall({ kind: "rejected", response: { status: 503 } }, ctx).status, "LINE_ERROR");
    const t38 = outcomeOfCall({ kind: "rejected", response: { status: 488 }, offeredT38Only: true }, ctx);
    assert.equal(t38.reasonCode, "t38_refused");
    assert.equal(t38.advancesLadder, true);
    assert.throws(() => outcomeOfCall({ kind: "rejected", response: { status: 200 } }, ctx), RangeError);
  });

  it("T.38 refused without a way on is t38_refused and steps down the ladder", () => {
    const o = outcomeOfCall({ kind: "t38_refused", response: { status: 488 } }, ctx);
    assert.equal(o.reasonCode, "t38_refused");
    assert.equal(o.status, "LINE_ERROR");
    assert.equal(o.advancesLadder, true);
    assert.equal(o.rawCause, "SIP 488 Not Acceptable Here to the T.38 re-INVITE; the call could not go on as audio");
  });

  it("no final response, a voice answer and a hang-up before the fax", () => {
    assert.equal(outcomeOfCall({ kind: "no_response", detail: "No answer to INVITE within 32 s (SIP timer B)" }, ctx).reasonCode, "call_failed");
    const voice = outcomeOfCall({ kind: "voice_answer", detail: "voice answer, no CED or V.21 flags" }, ctx);
    assert.equal(voice.reasonCode, "not_a_fax");
    assert.equal(voice.status, "NOFAX");
    assert.equal(voice.advancesLadder, false);
    const early = outcomeOfCall({ kind: "remote_hangup", progress: { pagesConfirmed: 0 }, detail: "BYE after answer" }, ctx);
    assert.equal(early.reasonCode, "fax_disconnected");
    const late = outcomeOfCall({ kind: "remote_hangup", progress: { transferStarted: true, pagesConfirmed: 1 }, detail: "BYE" }, ctx);
    assert.equal(late.reasonCode, "remote_disconnect");
    assert.equal(late.pagesDelivered, 1);
    assert.equal(outcomeOfCall({ kind: "remote_hangup", progress: { transferStarted: true, pagesConfirmed: 2 }, detail: "BYE" }, ctx).result, "delivered");
  });

  const watchdog: [Parameters<typeof outcomeOfCall>[0] & { kind: "watchdog" }, FailureReasonCode | "delivered", boolean][] = [
    [{ kind: "watchdog", phase: "setup", progress: { pagesConfirmed: 0 }, rawCause: "W" }, "call_failed", false],
    [{ kind: "watchdog", phase: "ringing", progress: { pagesConfirmed: 0 }, rawCause: "W" }, "no_answer", false],
    [{ kind: "watchdog", phase: "answered", progress: { pagesConfirmed: 0 }, rawCause: "W" }, "fax_timeout", true],
    [{ kind: "watchdog", phase: "phase_b", progress: { disReceived: true, pagesConfirmed: 0 }, rawCause: "W" }, "fax_negotiation_failed", true],
    [{ kind: "watchdog", phase: "phase_c", progress: { transferStarted: true, pagesConfirmed: 0 }, rawCause: "W" }, "transmission_failed", true],
    [{ kind: "watchdog", phase: "phase_d", progress: { transferStarted: true, pagesConfirmed: 1 }, rawCause: "W" }, "partial_transmission", true],
    [{ kind: "watchdog", phase: "phase_e", progress: { transferStarted: true, pagesConfirmed: 2 }, rawCause: "W" }, "delivered", false],
    [{ kind: "watchdog", phase: "call", progress: { disReceived: true, pagesConfirmed: 0 }, rawCause: "W" }, "fax_negotiation_failed", true],
    [{ kind: "watchdog", phase: "call", progress: { transferStarted: true, pagesConfirmed: 1 }, rawCause: "W" }, "partial_transmission", true],
    [{ kind: "watchdog", phase: "call", progress: { pagesConfirmed: 0 }, rawCause: "W" }, "fax_timeout", true],
  ];
  for (const [end, expected, ladder] of watchdog) {
    it(`the watchdog in ${end.phase} (${end.progress.pagesConfirmed}/2 pages) → ${expected}`, () => {
      const o = outcomeOfCall(end, ctx);
      assert.equal(o.result === "delivered" ? "delivered" : o.reasonCode, expected);
      assert.equal(o.advancesLadder, ladder);
      assert.ok(o.rawCause!.startsWith("W"));
    });
  }

  it("a lost media process: engine_lost (internal retry, no step down the ladder) with the pages confirmed before; all confirmed, delivered", () => {
    const lost = outcomeOfCall({ kind: "engine_lost", phase: "phase_c", progress: { transferStarted: true, pagesConfirmed: 1 }, detail: "the media process (pid 7) ended with signal SIGSEGV during a page" }, ctx);
    assert.equal(lost.result, "failed");
    assert.equal(lost.reasonCode, "engine_lost");
    assert.equal(lost.retryClass, "internal");
    assert.equal(lost.status, "LINE_ERROR");
    assert.equal(lost.advancesLadder, false);
    assert.equal(lost.pagesDelivered, 1);
    assert.equal(lost.rawCause, "the media process (pid 7) ended with signal SIGSEGV during a page; 1 of 2 pages confirmed");
    assert.equal(outcomeOfCall({ kind: "engine_lost", phase: "phase_e", progress: { transferStarted: true, pagesConfirmed: 2 }, detail: "lost" }, ctx).result, "delivered");
  });

  it("becomes the Line's AttemptOutcome", () => {
    const failed = outcomeOfCall({ kind: "fax_completed", completionCode: "T30_ERR_RETRYDCN", progress: { transferStarted: true, pagesConfirmed: 1 } }, { pagesTotal: 3, transport: "t38" });
    assert.deepEqual(toAttemptOutcome(failed, { durationSecs: 61, remoteCsid: "+49 30 1", bitRate: 9600 }), {
      result: "failed",
      reasonCode: "partial_transmission",
      pagesSent: 1,
      durationSecs: 61,
      remoteCsid: "+49 30 1",
      rawCause: "T30_ERR_RETRYDCN: Disconnected after permitted retries; 1 of 3 pages confirmed",
    });
    const ok = outcomeOfCall({ kind: "fax_completed", completionCode: 0, progress: { transferStarted: true, pagesConfirmed: 3 } }, { pagesTotal: 3, transport: "t38" });
    assert.deepEqual(toAttemptOutcome(ok, { durationSecs: 80, remoteCsid: null, bitRate: 14_400 }), {
      result: "delivered",
      pagesSent: 3,
      durationSecs: 80,
      remoteCsid: "",
      bitRate: 14_400,
    });
  });
});
