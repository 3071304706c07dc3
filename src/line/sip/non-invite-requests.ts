/**
 * Our non-INVITE requests inside a call's dialog (RFC 3261 §12.2.1.1, §17.1.2): BYE (§15.1.1),
 * OPTIONS as a keep-alive (§11) and UPDATE as a session refresh (RFC 3311, session-refresh.ts),
 * each answering a digest challenge.
 */
import { SipCallState, type CallShared } from "./call-state.ts";
import type { SipResponse } from "./sip-message.ts";

/** A non-INVITE request in the dialog, answering one digest challenge. Rejects on timeout/transport error. */
export async function nonInviteRequest(call: CallShared, method: "BYE" | "OPTIONS" | "UPDATE", extraHeaders: readonly [string, string][] = []): Promise<SipResponse> {
  const dialog = call.dialog;
  if (dialog === null) throw Object.assign(new Error("no dialog"), { sipStatus: 481 });
  const flow = await call.flowForDialog();
  let challenged = 0;
  for (;;) {
    const request = dialog.createRequest(method);
    if (method === "OPTIONS") request.headers.append("accept", "application/sdp");
    if (method === "UPDATE") request.headers.append("contact", call.contact(flow));
    for (const [name, value] of extraHeaders) request.headers.append(name, value);
    call.addVia(request, flow);
    call.authorize(request);
    const response = await new Promise<SipResponse>((resolve, reject) => {
      call.host.startClientTransaction(request, flow, {
        onResponse: (r) => {
          if (r.status >= 200) resolve(r);
        },
        onRequestTimeout: () => reject(Object.assign(new Error("Request Timeout"), { sipStatus: 408 })),
        onTransportError: (error) => reject(Object.assign(error, { sipStatus: 503 })),
      });
    });
    if ((response.status === 401 || response.status === 407) && challenged < 2 && call.answerChallenge(response, request)) {
      challenged++;
      continue;
    }
    return response;
  }
}

/** Sends BYE in the dialog and waits for its final response (or timeout, or transport error). */
export async function sendBye(call: CallShared): Promise<void> {
  try {
    await nonInviteRequest(call, "BYE");
  } catch {
    // The dialog ends either way (§15.1.1: any final response, or none, ends the BYE).
  }
}

/** Sends OPTIONS inside the dialog (a keep-alive); resolves with the final status (408 on timeout). */
export async function ping(call: CallShared): Promise<{ sipStatus: number; reasonPhrase: string }> {
  if (call.state !== SipCallState.Confirmed) return { sipStatus: 481, reasonPhrase: "No dialog" };
  try {
    const response = await nonInviteRequest(call, "OPTIONS");
    return { sipStatus: response.status, reasonPhrase: response.reason };
  } catch (error) {
    return { sipStatus: (error as { sipStatus?: number }).sipStatus ?? 503, reasonPhrase: (error as Error).message };
  }
}
