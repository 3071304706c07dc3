import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { selectChallenge, SipDigestChallenger, sipDigestAuthorization } from "../../src/line/sip/digest-auth.ts";
import { SipHeaders, type SipResponse } from "../../src/line/sip/sip-message.ts";

function challengeResponse(status: 401 | 407, values: string[]): SipResponse {
  const headers = new SipHeaders();
  for (const v of values) headers.append(status === 401 ? "WWW-Authenticate" : "Proxy-Authenticate", v);
  return { kind: "response", status, reason: "", headers, body: "" };
}

function param(header: string, name: string): string | undefined {
  const m = new RegExp(`(?:^|[\\s,])${name}=(?:"([^"]*)"|([^\\s,]+))`).exec(header.replace(/^Digest /, " "));
  return m === null ? undefined : (m[1] ?? m[2]);
}

describe("sip digest: RFC test vectors", () => {
  it("RFC 2617 §3.5 (MD5, qop=auth)", () => {
    const response = challengeResponse(401, [
      'Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"',
    ]);
    const chosen = selectChallenge(response);
    assert.ok(chosen);
    const header = sipDigestAuthorization(chosen.challenge, { method: "GET", uri: "/dir/index.html" }, { username: "Mufasa", password: "Circle Of Life" }, "0a4f113b", 1);
    assert.equal(param(header, "response"), "6629fae49393a05397450978507c4ef1");
    assert.equal(param(header, "nc"), "00000001");
    assert.equal(param(header, "qop"), "auth");
    assert.equal(param(header, "opaque"), "5ccc069c403ebaf9f0171e9517f40e41");
  });

  const rfc7616 = {
    realm: "http-auth@example.org",
    nonce: "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
    opaque: "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS",
    cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ",
  };

  for (const [algorithm, expected] of [
    ["MD5", "8ca523f5e9506fed4657c9700eebdbec"],
    ["SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"],
  ] as const) {
    it(`RFC 7616 §3.9.1 (${algorithm})`, () => {
      const response = challengeResponse(401, [
        `Digest realm="${rfc7616.realm}", qop="auth, auth-int", algorithm=${algorithm}, nonce="${rfc7616.nonce}", opaque="${rfc7616.opaque}"`,
      ]);
      const chosen = selectChallenge(response);
      assert.ok(chosen);
      const header = sipDigestAuthorization(chosen.challenge, { method: "GET", uri: "/dir/index.html" }, { username: "Mufasa", password: "Circle of Life" }, rfc7616.cnonce, 1);
      assert.equal(param(header, "response"), expected);
      assert.equal(param(header, "algorithm"), algorithm);
    });
  }

  it("answers a SIP INVITE challenge with the Request-URI as uri (RFC 3261 §22.4)", () => {
    const response = challengeResponse(401, ['Digest realm="trunk.example", nonce="abc123", qop="auth", algorithm=MD5']);
    const chosen = selectChallenge(response);
    assert.ok(chosen);
    assert.equal(chosen.authorizationHeader, "authorization");
    const uri = "sip:+4930123456@trunk.example";
    const header = sipDigestAuthorization(chosen.challenge, { method: "INVITE", uri }, { username: "fax", password: "pw" }, "c0ffee", 2);
    const md5 = (s: string): string => createHash("md5").update(s).digest("hex");
    const ha1 = md5("fax:trunk.example:pw");
    const ha2 = md5(`INVITE:${uri}`);
    assert.equal(param(header, "response"), md5(`${ha1}:abc123:00000002:c0ffee:auth:${ha2}`));
    assert.equal(param(header, "uri"), uri);
  });

  it("uses the RFC 2069 form when the challenge has no qop", () => {
    const response = challengeResponse(407, ['Digest realm="r", nonce="n"']);
    const chosen = selectChallenge(response);
    assert.ok(chosen);
    const header = sipDigestAuthorization(chosen.challenge, { method: "INVITE", uri: "sip:a@b" }, { username: "u", password: "p" }, "x", 1);
    const md5 = (s: string): string => createHash("md5").update(s).digest("hex");
    assert.equal(param(header, "response"), md5(`${md5("u:r:p")}:n:${md5("INVITE:sip:a@b")}`));
    assert.equal(param(header, "qop"), undefined);
  });
});

describe("sip digest: choosing the challenge", () => {
  it("answers a 407 with Proxy-Authorization", () => {
    assert.equal(selectChallenge(challengeResponse(407, ['Digest realm="p", nonce="n"']))?.authorizationHeader, "proxy-authorization");
  });

  it("prefers SHA-256 when offered next to MD5 (RFC 8760 §2.4)", () => {
    const chosen = selectChallenge(
      challengeResponse(401, ['Digest realm="r", nonce="n1", algorithm=MD5, qop="auth"', 'Digest realm="r", nonce="n2", algorithm=SHA-256, qop="auth"']),
    );
    assert.equal(chosen?.challenge.algorithm, "SHA-256");
    assert.equal(chosen?.challenge.nonce, "n2");
  });

  it("skips algorithms it cannot compute and realms the credentials are not for", () => {
    assert.equal(selectChallenge(challengeResponse(401, ['Digest realm="r", nonce="n", algorithm=AKAv1-MD5'])), null);
    assert.equal(selectChallenge(challengeResponse(401, ['Digest realm="other", nonce="n"']), { username: "u", password: "p", realm: "mine" }), null);
    assert.equal(selectChallenge(challengeResponse(401, ['Basic realm="r"'])), null);
  });

  it("reports stale=true", () => {
    assert.equal(selectChallenge(challengeResponse(401, ['Digest realm="r", nonce="n", stale=TRUE']))?.stale, true);
    assert.equal(selectChallenge(challengeResponse(401, ['Digest realm="r", nonce="n"']))?.stale, false);
  });
});

describe("sip digest: challenging callers (SipDigestChallenger)", () => {
  const URI = "sip:+4930123456@faxline.test";
  const invite = (authorization: string | null, callId = "call-1", uri = URI) => {
    const headers = new SipHeaders();
    headers.append("Call-ID", callId);
    if (authorization !== null) headers.append("Authorization", authorization);
    return { method: "INVITE", uri, headers };
  };
  const answer = (challenger: SipDigestChallenger, password: string, callId = "call-1") => {
    const c = selectChallenge(challengeResponse(401, [challenger.challenge(invite(null, callId))]))!;
    return sipDigestAuthorization(c.challenge, { method: "INVITE", uri: URI }, { username: "carrier-a", password });
  };
  const passwords = (u: string) => (u === "carrier-a" ? "s3cret" : null);

  it("takes the right answer to its own challenge for the same call and Request-URI, and refuses the rest", () => {
    let now = 1_800_000_000_000;
    const challenger = new SipDigestChallenger({ realm: "faxline", now: () => now });
    assert.deepEqual(challenger.verify(invite(null), passwords), { result: "missing" });
    assert.deepEqual(challenger.verify(invite(answer(challenger, "s3cret")), passwords), { result: "ok", username: "carrier-a" });
    assert.deepEqual(challenger.verify(invite(answer(challenger, "guess")), passwords), { result: "refused" }, "wrong password");
    assert.deepEqual(challenger.verify(invite(answer(challenger, "s3cret").replace('username="carrier-a"', 'username="other"')), passwords), { result: "refused" }, "unknown user");
    assert.deepEqual(challenger.verify(invite(answer(challenger, "s3cret"), "call-1", "sip:+4930999999@faxline.test"), passwords), { result: "refused" }, "an answer made for another Request-URI");
    assert.deepEqual(challenger.verify(invite(answer(challenger, "s3cret", "call-1"), "call-2"), passwords), { result: "stale" }, "an answer made for another call is challenged again");
    const other = new SipDigestChallenger({ realm: "faxline", now: () => now });
    assert.deepEqual(challenger.verify(invite(answer(other, "s3cret")), passwords), { result: "stale" }, "another node's (or an earlier life's) nonce is challenged again");
    const old = answer(challenger, "s3cret");
    now += 301_000;
    assert.deepEqual(challenger.verify(invite(old), passwords), { result: "stale" });
    assert.match(challenger.challenge(invite(null), true), /stale=true/);
  });

  it("takes an answer once: a replay (the same nonce and count) is challenged again, a higher count is taken", () => {
    const challenger = new SipDigestChallenger({ realm: "faxline" });
    const c = selectChallenge(challengeResponse(401, [challenger.challenge(invite(null))]))!;
    const first = sipDigestAuthorization(c.challenge, { method: "INVITE", uri: URI }, { username: "carrier-a", password: "s3cret" }, "cnonce-1", 1);
    assert.deepEqual(challenger.verify(invite(first), passwords), { result: "ok", username: "carrier-a" });
    assert.deepEqual(challenger.verify(invite(first), passwords), { result: "stale" }, "the same answer again: a replay");
    const second = sipDigestAuthorization(c.challenge, { method: "INVITE", uri: URI }, { username: "carrier-a", password: "s3cret" }, "cnonce-2", 2);
    assert.deepEqual(challenger.verify(invite(second), passwords), { result: "ok", username: "carrier-a" }, "nc 2 after nc 1");
    const back = sipDigestAuthorization(c.challenge, { method: "INVITE", uri: URI }, { username: "carrier-a", password: "s3cret" }, "cnonce-3", 1);
    assert.deepEqual(challenger.verify(invite(back), passwords), { result: "stale" }, "a count that goes back");
  });

  it("remembers a bounded number of nonces, the oldest forgotten first", () => {
    const challenger = new SipDigestChallenger({ realm: "faxline", maxNonces: 3 });
    const answers = ["a", "b", "c", "d"].map((callId) => answer(challenger, "s3cret", callId));
    assert.equal(challenger.remembered, 3);
    assert.deepEqual(challenger.verify(invite(answers[0]!, "a"), passwords), { result: "stale" }, "forgotten");
    assert.deepEqual(challenger.verify(invite(answers[3]!, "d"), passwords), { result: "ok", username: "carrier-a" });
  });
});
