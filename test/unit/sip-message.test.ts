import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseMessage, parseVia, serializeMessage, SipParseError, SipStreamFramer, topVia, type SipRequest } from "../../src/line/sip/sip-message.ts";
import { formatSipUri, parseNameAddr, parseSipUri } from "../../src/line/sip/sip-uri.ts";

const INVITE = [
  "INVITE sip:+4930123@trunk.example SIP/2.0",
  "v: SIP/2.0/UDP 192.0.2.1:5070;branch=z9hG4bKa;rport, SIP/2.0/TCP [2001:db8::1]:5060;branch=z9hG4bKb",
  "Via: SIP/2.0/UDP 192.0.2.2;branch=z9hG4bKc",
  "Max-Forwards: 70",
  'f: "Fax, Line" <sip:fax@faxline.test>;tag=abc',
  "t: <sip:+4930123@trunk.example>",
  "i: call-1@192.0.2.1",
  "CSeq: 7 INVITE",
  "Subject: a folded",
  "  header value",
  "c: application/sdp",
  "l: 6",
  "",
  "v=0\r\nX",
].join("\r\n");

describe("sip: message parsing (RFC 3261 §7, §25)", () => {
  it("expands compact headers, unfolds continuation lines and splits Via lists", () => {
    const m = parseMessage(INVITE) as SipRequest;
    assert.equal(m.kind, "request");
    assert.equal(m.method, "INVITE");
    assert.equal(m.headers.get("call-id"), "call-1@192.0.2.1");
    assert.equal(m.headers.get("Content-Type"), "application/sdp");
    assert.equal(m.headers.get("subject"), "a folded header value");
    assert.deepEqual(m.headers.getList("via").map((v) => parseVia(v).host), ["192.0.2.1", "2001:db8::1", "192.0.2.2"]);
    assert.equal(topVia(m).params.get("branch"), "z9hG4bKa");
    assert.equal(topVia(m).params.get("rport"), null);
    assert.equal(m.body, "v=0\r\nX", "the body is cut to Content-Length");
    const from = parseNameAddr(m.headers.get("from")!);
    assert.equal(from.displayName, "Fax, Line");
    assert.equal(from.params.get("tag"), "abc");
  });

  it("serializes with canonical names and a byte-exact Content-Length", () => {
    const m = parseMessage(INVITE) as SipRequest;
    m.body = "ü";
    const text = serializeMessage(m).toString("utf8");
    assert.match(text, /\r\nCall-ID: call-1@192\.0\.2\.1\r\n/);
    assert.match(text, /\r\nCSeq: 7 INVITE\r\n/);
    assert.match(text, /\r\nContent-Length: 2\r\n\r\nü$/);
    assert.equal((parseMessage(text) as SipRequest).body, "ü");
  });

  it("rejects messages without the mandatory headers or with a mismatched CSeq", () => {
    assert.throws(() => parseMessage("INVITE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bKx\r\n\r\n"), SipParseError);
    assert.throws(() => parseMessage(INVITE.replace("CSeq: 7 INVITE", "CSeq: 7 BYE")), /does not match/);
    assert.throws(() => parseMessage("HELLO\r\n\r\n"), /bad start line/);
    assert.throws(() => parseMessage(INVITE.replace("l: 6", "l: 60")), /shorter/);
  });

  it("parses a response with an empty reason phrase", () => {
    const r = parseMessage(INVITE.replace("INVITE sip:+4930123@trunk.example SIP/2.0", "SIP/2.0 183 "));
    assert.equal(r.kind === "response" && r.status, 183);
  });
});

describe("sip: stream framing (RFC 3261 §18.3)", () => {
  it("frames messages split across chunks and back to back, and counts CRLF keep-alives", () => {
    const one = Buffer.from(INVITE);
    const framer = new SipStreamFramer();
    const all = Buffer.concat([Buffer.from("\r\n\r\n"), one, one]);
    const got = [];
    let pings = 0;
    for (let i = 0; i < all.length; i += 37) {
      const r = framer.push(all.subarray(i, i + 37));
      for (const read of r.messages) got.push(read.kind === "message" ? read.message : assert.fail(read.detail));
      pings += r.pings;
    }
    assert.equal(got.length, 2);
    assert.equal(pings, 1);
    assert.equal(got[1]!.body, "v=0\r\nX");
  });

  it("refuses a message without Content-Length on a stream", () => {
    const framer = new SipStreamFramer();
    assert.throws(() => framer.push(Buffer.from(INVITE.replace("l: 6\r\n", ""))), /no Content-Length/);
  });
});

describe("sip: URIs", () => {
  it("parses and formats user, host, IPv6, port and parameters", () => {
    const uri = parseSipUri("sip:+4930123;npdi@[2001:db8::5]:5080;transport=TCP;lr?subject=x");
    assert.equal(uri.user, "+4930123;npdi");
    assert.equal(uri.host, "2001:db8::5");
    assert.equal(uri.port, 5080);
    assert.equal(uri.params.get("transport"), "TCP");
    assert.equal(uri.params.get("lr"), null);
    assert.equal(formatSipUri(uri), "sip:+4930123;npdi@[2001:db8::5]:5080;transport=TCP;lr?subject=x");
    assert.throws(() => parseSipUri("tel:+4930123"), /not a SIP URI/);
    assert.throws(() => parseSipUri("sip:a@host:99999"), /bad port/);
  });

  it("treats parameters after a bare addr-spec as header parameters (§20.10)", () => {
    const v = parseNameAddr("sip:+4930123@trunk.example;tag=xyz");
    assert.equal(v.uri, "sip:+4930123@trunk.example");
    assert.equal(v.params.get("tag"), "xyz");
  });
});
