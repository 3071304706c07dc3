import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  answerOffer,
  answerT38Params,
  buildAudioMedia,
  buildT38Media,
  DEFAULT_T38_CAPABILITIES,
  formatSdp,
  parseSdp,
  readNegotiatedMedia,
  readT38Params,
  SdpParseError,
  SdpSession,
  t38OfferParams,
  type AnswerPolicy,
} from "../../src/line/sip/sdp.ts";
import { rtcpRemote } from "../../src/line/media-host/fax-media.ts";

const crlf = (lines: string[]): string => `${lines.join("\r\n")}\r\n`;

/** The T.38 offer SIPp sends in test/interop/sipp (as a gateway would). */
const GATEWAY_T38_OFFER = crlf([
  "v=0",
  "o=gw 42 2 IN IP4 192.0.2.7",
  "s=-",
  "c=IN IP4 192.0.2.7",
  "t=0 0",
  "m=image 46002 udptl t38",
  "a=T38FaxVersion:0",
  "a=T38MaxBitRate:14400",
  "a=T38FaxRateManagement:transferredTCF",
  "a=T38FaxMaxBuffer:1800",
  "a=T38FaxMaxDatagram:512",
  "a=T38FaxUdpEC:t38UDPRedundancy",
]);

const POLICY: AnswerPolicy = {
  ports: { address: "198.51.100.1", audioPort: 40_000, t38Port: 40_002 },
  t38: true,
  codecs: ["PCMA", "PCMU"],
  telephoneEventPayloadType: null,
  t38Capabilities: DEFAULT_T38_CAPABILITIES,
};

describe("sdp: building our descriptions", () => {
  it("offers PCMA and PCMU (+ telephone-event when asked) on one audio line", () => {
    const session = new SdpSession({ address: "198.51.100.1", sessionId: "1000" });
    assert.equal(
      session.describe([buildAudioMedia({ port: 40_000 })]),
      crlf([
        "v=0",
        "o=faxline 1000 1000 IN IP4 198.51.100.1",
        "s=faxline",
        "c=IN IP4 198.51.100.1",
        "t=0 0",
        "m=audio 40000 RTP/AVP 8 0",
        "a=rtpmap:8 PCMA/8000",
        "a=rtpmap:0 PCMU/8000",
        "a=ptime:20",
        "a=sendrecv",
      ]),
    );
    const withEvents = formatSdp({ ...parseSdp(session.describe([buildAudioMedia({ port: 40_000 })])), media: [buildAudioMedia({ port: 40_000, telephoneEventPayloadType: 101 })] });
    assert.match(withEvents, /m=audio 40000 RTP\/AVP 8 0 101\r\n/);
    assert.match(withEvents, /a=rtpmap:101 telephone-event\/8000\r\na=fmtp:101 0-15\r\n/);
  });

  it("offers T.38 with every Annex D attribute, transferred TCF and redundancy", () => {
    const line = buildT38Media(40_002, t38OfferParams());
    const text = formatSdp({ ...parseSdp(GATEWAY_T38_OFFER), media: [line] });
    assert.match(
      text,
      /m=image 40002 udptl t38\r\na=T38FaxVersion:0\r\na=T38MaxBitRate:14400\r\na=T38FaxRateManagement:transferredTCF\r\na=T38FaxMaxBuffer:2000\r\na=T38FaxMaxDatagram:400\r\na=T38FaxUdpEC:t38UDPRedundancy\r\n/,
    );
  });

  it("keeps the o= version for unchanged SDP and raises it by one for each change (RFC 3264 §8)", () => {
    const session = new SdpSession({ address: "198.51.100.1", sessionId: "7" });
    const audio = [buildAudioMedia({ port: 40_000 })];
    const t38 = [buildT38Media(40_002, t38OfferParams())];
    const version = (text: string): string => parseSdp(text).origin.sessionVersion;
    assert.equal(version(session.describe(audio)), "7");
    assert.equal(version(session.describe(audio)), "7", "a refresh answers with the same version");
    assert.equal(version(session.describe(t38)), "8");
    assert.equal(version(session.describe(t38)), "8");
    assert.equal(version(session.describe(audio)), "9", "going back is a change too");
    assert.equal(parseSdp(session.describe(audio)).origin.sessionId, "7");
  });
});

describe("sdp: parsing", () => {
  it("parses a gateway's T.38 offer into typed parameters", () => {
    const sdp = parseSdp(GATEWAY_T38_OFFER);
    assert.equal(sdp.origin.sessionVersion, "2");
    assert.deepEqual(readNegotiatedMedia(sdp, ["PCMA"]), {
      kind: "t38",
      remote: { address: "192.0.2.7", port: 46_002 },
      params: {
        version: 0,
        maxBitRate: 14_400,
        rateManagement: "transferredTCF",
        maxBuffer: 1800,
        maxDatagram: 512,
        errorCorrection: "t38UDPRedundancy",
        fillBitRemoval: false,
        transcodingMMR: false,
        transcodingJBIG: false,
      },
    });
  });

  it("reads T.38 attributes case-insensitively, bare booleans, FEC and absent values", () => {
    const sdp = parseSdp(
      crlf([
        "v=0",
        "o=- 1 1 IN IP4 192.0.2.9",
        "s=-",
        "t=0 0",
        "m=image 5000 UDPTL t38",
        "c=IN IP4 192.0.2.10",
        "a=T38faxVersion:3",
        "a=T38FaxFillBitRemoval",
        "a=T38FaxTranscodingMMR:0",
        "a=t38faxratemanagement:localTCF",
        "a=T38FaxUdpEC:t38UDPFEC",
      ]),
    );
    const media = sdp.media[0]!;
    assert.deepEqual(readT38Params(media), {
      version: 3,
      maxBitRate: 14_400,
      rateManagement: "localTCF",
      maxBuffer: null,
      maxDatagram: null,
      errorCorrection: "t38UDPFEC",
      fillBitRemoval: true,
      transcodingMMR: false,
      transcodingJBIG: false,
    });
    const negotiated = readNegotiatedMedia(sdp, ["PCMA"]);
    assert.deepEqual(negotiated?.remote, { address: "192.0.2.10", port: 5000 }, "the media-level c= wins");
  });

  it("picks the far end's first codec we offered, by static type or rtpmap, and its telephone-event", () => {
    const sdp = parseSdp(
      crlf([
        "v=0",
        "o=- 1 1 IN IP4 192.0.2.9",
        "s=-",
        "c=IN IP4 192.0.2.9",
        "t=0 0",
        "m=audio 7000 RTP/AVP 18 0 8 96",
        "a=rtpmap:18 G729/8000",
        "a=rtpmap:96 telephone-event/8000",
        "a=ptime:30",
      ]),
    );
    assert.deepEqual(readNegotiatedMedia(sdp, ["PCMA", "PCMU"]), {
      kind: "audio",
      remote: { address: "192.0.2.9", port: 7000 },
      codec: "PCMU",
      payloadType: 0,
      telephoneEventPayloadType: 96,
      ptimeMs: 30,
    });
    const pcmaOnly = readNegotiatedMedia(sdp, ["PCMA"]);
    assert.equal(pcmaOnly?.kind === "audio" && `${pcmaOnly.codec}/${pcmaOnly.payloadType}`, "PCMA/8", "only what we accept");
    const only729 = parseSdp(crlf(["v=0", "o=- 1 1 IN IP4 192.0.2.9", "s=-", "c=IN IP4 192.0.2.9", "t=0 0", "m=audio 7000 RTP/AVP 18"]));
    assert.equal(readNegotiatedMedia(only729, ["PCMA", "PCMU"]), null);
  });

  it("reads where the far end takes RTCP from a=rtcp (RFC 3605), with or without an address; else RTP + 1", () => {
    const audio = (rtcp: string | null) =>
      readNegotiatedMedia(
        parseSdp(crlf(["v=0", "o=- 1 1 IN IP4 192.0.2.9", "s=-", "c=IN IP4 192.0.2.9", "t=0 0", "m=audio 7000 RTP/AVP 8", ...(rtcp === null ? [] : [`a=rtcp:${rtcp}`])])),
        ["PCMA"],
      );
    const remoteOf = (rtcp: string | null) => {
      const media = audio(rtcp);
      assert.ok(media?.kind === "audio");
      return { remote: media.remote, rtcpGoesTo: rtcpRemote(media.remote) };
    };
    assert.deepEqual(remoteOf("7203"), { remote: { address: "192.0.2.9", port: 7000, rtcp: { address: "192.0.2.9", port: 7203 } }, rtcpGoesTo: { address: "192.0.2.9", port: 7203 } });
    assert.deepEqual(remoteOf("53020 IN IP4 198.51.100.4").rtcpGoesTo, { address: "198.51.100.4", port: 53020 });
    assert.deepEqual(remoteOf("53020 in ip6 2001:db8::7").rtcpGoesTo, { address: "2001:db8::7", port: 53020 });
    // None, or one that cannot be read: the RTP port + 1, RFC 3605's default.
    for (const unreadable of [null, "0", "70000", "abc", "7203 IN IP4"]) {
      assert.deepEqual(remoteOf(unreadable), { remote: { address: "192.0.2.9", port: 7000 }, rtcpGoesTo: { address: "192.0.2.9", port: 7001 } }, String(unreadable));
    }
  });

  it("ignores a rejected stream (port 0)", () => {
    const sdp = parseSdp(crlf(["v=0", "o=- 1 1 IN IP4 192.0.2.9", "s=-", "c=IN IP4 192.0.2.9", "t=0 0", "m=image 0 udptl t38"]));
    assert.equal(readNegotiatedMedia(sdp, ["PCMA"]), null);
  });

  it("rejects text that is not SDP", () => {
    assert.throws(() => parseSdp("hello"), SdpParseError);
    assert.throws(() => parseSdp(crlf(["v=0", "s=-"])), /without o= line/);
    assert.throws(() => parseSdp(crlf(["v=0", "o=- 1 1 IN IP4 h", "m=audio x RTP/AVP 0"])), /bad m= port/);
  });

  it("formats what it parses unchanged", () => {
    assert.equal(formatSdp(parseSdp(GATEWAY_T38_OFFER)), GATEWAY_T38_OFFER);
  });
});

describe("sdp: answering the far end's offer", () => {
  it("accepts T.38 with our own limits and the negotiated version, bit rate and EC", () => {
    const offer = parseSdp(GATEWAY_T38_OFFER.replace("T38FaxVersion:0", "T38FaxVersion:3").replace("t38UDPRedundancy", "t38UDPFEC"));
    const answer = answerOffer(offer, POLICY);
    assert.ok(answer);
    assert.equal(answer.media.length, 1);
    const ours = readT38Params(answer.media[0]!);
    assert.equal(answer.media[0]!.port, 40_002);
    assert.equal(ours.version, 0, "no higher than we speak");
    assert.equal(ours.errorCorrection, "t38UDPRedundancy", "FEC offered; we send redundancy");
    assert.equal(ours.maxDatagram, 400);
    assert.equal(ours.rateManagement, "transferredTCF");
    assert.ok(answer.negotiated.kind === "t38");
    assert.equal(answer.negotiated.params.maxDatagram, 512, "the media layer gets the far end's datagram limit");
    assert.equal(answer.negotiated.params.version, 0);
    assert.equal(answer.negotiated.params.errorCorrection, "t38UDPRedundancy");
  });

  it("answers line for line, rejecting the lines it does not take with port 0", () => {
    const offer = parseSdp(
      crlf([
        "v=0",
        "o=gw 1 5 IN IP4 192.0.2.7",
        "s=-",
        "c=IN IP4 192.0.2.7",
        "t=0 0",
        "m=audio 46000 RTP/AVP 0 8",
        "m=image 46002 udptl t38",
        "a=T38FaxVersion:0",
      ]),
    );
    const answer = answerOffer(offer, POLICY);
    assert.deepEqual(
      answer?.media.map((m) => `${m.type} ${m.port}`),
      ["audio 0", "image 40002"],
    );
    const audioOnly = answerOffer(offer, { ...POLICY, t38: false });
    assert.deepEqual(
      audioOnly?.media.map((m) => `${m.type} ${m.port} ${m.formats.join(",")}`),
      ["audio 40000 0", "image 0 t38"],
    );
    assert.equal(audioOnly?.negotiated.kind === "audio" && audioOnly.negotiated.codec, "PCMU");
  });

  it("has no answer for T.38 alone when T.38 is off (the request gets 488)", () => {
    assert.equal(answerOffer(parseSdp(GATEWAY_T38_OFFER), { ...POLICY, t38: false }), null);
  });

  it("lowers the version and bit rate to ours and repeats the rate management (T.38 Annex D)", () => {
    const offer = readT38Params(parseSdp(GATEWAY_T38_OFFER.replace("transferredTCF", "localTCF").replace("14400", "33600")).media[0]!);
    const ours = answerT38Params({ ...offer, version: 2 });
    assert.equal(ours.version, 0);
    assert.equal(ours.maxBitRate, 14_400);
    assert.equal(ours.rateManagement, "localTCF");
  });
});
