/**
 * Fax-to-SFTP's pure parts: the file name pattern (placeholders, and what a pattern or a value
 * can never bring into a name: a path, a "..", a leading dot, characters a server cannot take),
 * the remote directory check, the metadata file in JSON and XML, and host key fingerprints.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { checkFilePattern, checkRemoteDirectory, expandFilePattern, faxFileNames, FilePatternError, partName, remotePath } from "../../src/notifications/sftp/sftp-file-names.ts";
import { metadataFile, providerTimestamp } from "../../src/notifications/sftp/sftp-metadata.ts";
import { hostKeyFingerprint, hostKeyType, normalizeFingerprint, readClientKey, newClientKey } from "../../src/notifications/sftp/sftp-host-key.ts";

const fax = {
  id: "FIAB12CD34EF56GH78IJ90",
  calledNumber: "+4930123456780",
  callingNumber: "+498912345678",
  topic: "orders",
  receivedAt: Date.UTC(2026, 10, 29, 9, 14, 3),
  pages: 3,
};

describe("sftp file names", () => {
  it("expands every placeholder; the default names date, time, number called and id", () => {
    assert.equal(expandFilePattern("{date}-{time}_{called}_{id}", fax), "20261129-091403_4930123456780_FIAB12CD34EF56GH78IJ90");
    assert.equal(expandFilePattern("{topic}.{calling}.{pages}p.{id}", fax), "orders.498912345678.3p.FIAB12CD34EF56GH78IJ90");
    assert.equal(expandFilePattern("{calling}_{id}", { ...fax, callingNumber: null }), "unknown_FIAB12CD34EF56GH78IJ90");
    assert.deepEqual(faxFileNames("fax_{id}", fax, "TIFF", "XML"), { document: "fax_FIAB12CD34EF56GH78IJ90.tif", metadata: "fax_FIAB12CD34EF56GH78IJ90.xml" });
    assert.deepEqual(faxFileNames("fax_{id}", fax, "PDF", "JSON"), { document: "fax_FIAB12CD34EF56GH78IJ90.pdf", metadata: "fax_FIAB12CD34EF56GH78IJ90.json" });
    assert.equal(partName("fax_1.pdf"), ".fax_1.pdf.part");
  });

  it("refuses patterns that could make a path, a hidden name, a clash or an unknown value", () => {
    const refused: [string, RegExp][] = [
      ["../{id}", /not "\/"/],
      ["in/{id}", /not "\/"/],
      ["a\\{id}", /not "\\\\"/],
      ["{id} copy", /not " "/],
      ["{id}:x", /not ":"/],
      ["fax_{date}", /must hold \{id\}/],
      ["{id}_{sender}", /unknown placeholder \{sender\}/],
      [".{id}", /must not start with a dot/],
      ["", /pattern is needed/],
      [`${"x".repeat(120)}{id}`, /at most 120/],
    ];
    for (const [pattern, message] of refused) assert.throws(() => checkFilePattern(pattern), (e: Error) => e instanceof FilePatternError && message.test(e.message), pattern);
    assert.equal(checkFilePattern("  {date}_{id}  "), "{date}_{id}");
  });

  it("reduces values to safe characters, so a topic or number can never make a path", () => {
    // Numbers are E.164 and topics [A-Za-z0-9._-] when stored; the names stay safe even if not.
    const odd = { ...fax, topic: "../../etc", callingNumber: "+49 (89) 123/456" };
    const name = expandFilePattern("{topic}_{calling}_{id}", odd);
    assert.doesNotMatch(name, /\/|\.\./);
    assert.match(name, /^[A-Za-z0-9._-]+$/);
    assert.doesNotMatch(expandFilePattern("{topic}{id}", { ...fax, topic: ".hidden" }), /^\./);
  });

  it("checks the directory: absolute or relative, no '.' or '..' parts, no backslash or control character", () => {
    assert.equal(checkRemoteDirectory(""), "");
    assert.equal(checkRemoteDirectory("."), "");
    assert.equal(checkRemoteDirectory("/incoming/fax/"), "/incoming/fax");
    assert.equal(checkRemoteDirectory("incoming//fax"), "incoming/fax");
    assert.equal(checkRemoteDirectory("/"), "/");
    for (const bad of ["/in/../etc", "./in", "in\\fax", "in\u0000fax"]) assert.throws(() => checkRemoteDirectory(bad), FilePatternError, bad);
    assert.equal(remotePath("", "a.pdf"), "a.pdf");
    assert.equal(remotePath("/", "a.pdf"), "/a.pdf");
    assert.equal(remotePath("/in", "a.pdf"), "/in/a.pdf");
  });
});

describe("sftp metadata file", () => {
  const facts = {
    id: fax.id,
    topic: "orders",
    receivedAt: fax.receivedAt,
    calledNumber: fax.calledNumber,
    callingNumber: null,
    remoteCsid: "ACME <Sales> & Co",
    pages: 3,
    status: "PARTIAL",
    reasonCode: "t30_page_lost",
    resolution: "HIGH",
    durationSecs: 74,
    bitRate: 14400,
  };

  it("writes the provider's FaxDetails names as strings, and names the document", () => {
    const json = JSON.parse(metadataFile(facts, "PDF", "x.pdf", "JSON").toString("utf8"));
    assert.deepEqual(json, {
      Fax: {
        FaxDetails: {
          JobID: fax.id,
          DateReceived: "2026-11-29T09:14:03+0000",
          CalledNumber: "+4930123456780",
          CallingNumber: null,
          RemoteCSID: "ACME <Sales> & Co",
          Topic: "orders",
          FileType: "pdf",
          Resolution: "HIGH",
          TotalDuration: "74",
          BaudRate: "14400",
          PageCount: "3",
          Status: "PARTIAL",
          ReasonCode: "t30_page_lost",
          Service: "Fax2SFTP",
        },
        FaxFile: [{ FileType: "pdf", FileName: "x.pdf" }],
      },
    });
    assert.equal(providerTimestamp(Date.UTC(2026, 0, 2, 3, 4, 5)), "2026-01-02T03:04:05+0000");
  });

  it("writes the same as XML, escaped, with empty elements for what the fax lacks", () => {
    const xml = metadataFile(facts, "TIFF", "x.tif", "XML").toString("utf8");
    assert.match(xml, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<Fax>\n  <FaxDetails>\n    <JobID>FIAB12CD34EF56GH78IJ90<\/JobID>/);
    assert.match(xml, /<RemoteCSID>ACME &lt;Sales&gt; &amp; Co<\/RemoteCSID>/);
    assert.match(xml, /<CallingNumber\/>/);
    assert.match(xml, /<FileType>tiff<\/FileType>\n {4}<FileName>x\.tif<\/FileName>/);
    assert.match(xml, /<\/Fax>\n$/);
  });
});

describe("ssh keys", () => {
  it("fingerprints a key blob as OpenSSH does and names its type", () => {
    const { publicKey } = newClientKey("t");
    const blob = Buffer.from(publicKey.split(" ")[1]!, "base64");
    const fp = hostKeyFingerprint(blob);
    assert.equal(fp, `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`);
    assert.equal(fp.length, 50);
    assert.equal(hostKeyType(blob), "ssh-ed25519");
    assert.equal(normalizeFingerprint(`${fp}=`), fp);
    assert.equal(normalizeFingerprint(fp.slice(7)), fp, "the part after SHA256: alone");
    assert.equal(normalizeFingerprint("MD5:12:34"), null);
  });

  it("reads a new key back, and refuses a public key or junk with a sentence", () => {
    const pair = newClientKey("t");
    assert.equal(readClientKey(pair.privateKey, null).publicKey, pair.publicKey.split(" ").slice(0, 2).join(" "));
    assert.throws(() => readClientKey(pair.publicKey, null), /This is a public key; give the private key/);
    assert.throws(() => readClientKey("not a key", null), /The private key cannot be read/);
  });
});
