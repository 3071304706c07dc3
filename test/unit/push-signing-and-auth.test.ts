import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isSigningSecret, newSigningSecret, signWebhook, verifyWebhook } from "../../src/notifications/push/sign-webhook.ts";
import { digestAuthorization, parseDigestChallenge } from "../../src/net/digest-auth.ts";
import { pushAddressGuard } from "../../src/notifications/push/push-address-guard.ts";
import { ConfigError } from "../../src/config/schema.ts";
import { OAuth2TokenCache, sendPush } from "../../src/notifications/push/send-push.ts";

describe("Standard Webhooks signatures", () => {
  // The reference vector of the Standard Webhooks libraries.
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
  const timestamp = 1614265330;
  const body = '{"test": 2432232314}';

  it("matches the reference vector", () => {
    const headers = signWebhook([secret], id, timestamp, body);
    assert.deepEqual(headers, {
      "webhook-id": id,
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    });
  });

  it("verifies, and refuses a changed body, id, stale timestamp or other secret", () => {
    const headers = signWebhook([secret], id, timestamp, body);
    const h = { id, timestamp: headers["webhook-timestamp"]!, signature: headers["webhook-signature"]! };
    assert.equal(verifyWebhook(secret, h, body, timestamp + 10), true);
    assert.equal(verifyWebhook(secret, h, `${body} `, timestamp), false);
    assert.equal(verifyWebhook(secret, { ...h, id: "msg_other" }, body, timestamp), false);
    assert.equal(verifyWebhook(secret, h, body, timestamp + 301), false, "outside the 5-minute tolerance");
    assert.equal(verifyWebhook(newSigningSecret(), h, body, timestamp), false);
  });

  it("signs with both secrets after a rotation, so either verifies", () => {
    const older = newSigningSecret();
    const newer = newSigningSecret();
    const headers = signWebhook([newer, older], id, timestamp, body);
    const h = { id, timestamp: headers["webhook-timestamp"]!, signature: headers["webhook-signature"]! };
    assert.equal(h.signature.split(" ").length, 2);
    assert.equal(verifyWebhook(newer, h, body, timestamp), true);
    assert.equal(verifyWebhook(older, h, body, timestamp), true);
  });

  it("makes secrets of the whsec_ form with 32 random bytes", () => {
    const s = newSigningSecret();
    assert.ok(isSigningSecret(s));
    assert.equal(Buffer.from(s.slice(6), "base64").length, 32);
    assert.notEqual(s, newSigningSecret());
  });
});

describe("HTTP Digest answers (RFC 7616 §3.9.1 example)", () => {
  const header =
    'Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=MD5, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"';
  const request = { method: "GET", uri: "/dir/index.html", username: "Mufasa", password: "Circle of Life" };
  const cnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ";

  it("parses the challenge", () => {
    const c = parseDigestChallenge(["Basic realm=x", header]);
    assert.deepEqual(c, {
      realm: "http-auth@example.org",
      nonce: "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
      opaque: "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS",
      algorithm: "MD5",
      qop: ["auth", "auth-int"],
    });
    assert.equal(parseDigestChallenge('Basic realm="x"'), null);
  });

  it("computes the RFC's MD5 and SHA-256 responses", () => {
    const c = parseDigestChallenge(header)!;
    assert.match(digestAuthorization(c, request, cnonce), /response="8ca523f5e9506fed4657c9700eebdbec"/);
    const sha = digestAuthorization({ ...c, algorithm: "SHA-256" }, request, cnonce);
    assert.match(sha, /response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"/);
    assert.match(sha, /qop=auth, nc=00000001, cnonce="f2\/wE4q74E6zIJEtWaHKaf5wv\/H5QzzpXusqGemxURZJ", opaque="FQhe/);
  });
});

describe("push address guard", () => {
  it("does not tell the client what a refused target name resolved to (no DNS oracle)", async () => {
    const result = await sendPush({
      url: "http://internal.example.test/hook",
      body: "{}",
      contentType: "application/json",
      headers: {},
      auth: { method: "NONE", principal: null, credentials: null },
      oauth2TokenUrl: null,
      timeoutMs: 1000,
      guard: pushAddressGuard([]),
      tokens: new OAuth2TokenCache(),
      now: () => 0,
      lookup: async () => [{ address: "10.9.8.7", family: 4 }],
    });
    assert.equal(result.kind, "permanent");
    assert.equal(result.error, "Refusing to push to http://internal.example.test/hook: internal.example.test resolves to an address that pushes may not go to (allow it in push.allowTargets)");
    assert.ok(!result.error!.includes("10.9.8.7"));
  });

  it("refuses loopback, private and metadata addresses unless allowed", () => {
    const guard = pushAddressGuard([]);
    assert.equal(guard("127.0.0.1"), "a loopback address");
    assert.match(guard("169.254.169.254")!, /metadata/);
    assert.equal(guard("10.1.2.3"), "a private address");
    assert.equal(guard("93.184.215.14"), null);
  });

  it("allows exactly the configured addresses and blocks", () => {
    const guard = pushAddressGuard(["127.0.0.1", "10.20.0.0/16", "::1"]);
    assert.equal(guard("127.0.0.1"), null);
    assert.equal(guard("127.0.0.2"), "a loopback address");
    assert.equal(guard("10.20.99.1"), null);
    assert.equal(guard("10.21.0.1"), "a private address");
    assert.equal(guard("::1"), null);
  });

  it("rejects unusable entries with a configuration error", () => {
    assert.throws(() => pushAddressGuard(["localhost"]), ConfigError);
    assert.throws(() => pushAddressGuard(["10.0.0.0/33"]), /not an IP address or CIDR block/);
  });
});
