/**
 * `faxline fax send`: the operator's command renders a text file and sends it at once over the SIP
 * line, and prints the outcome and statistics. Against the same far ends as the API test: SIPp as
 * the trunk (sipp/uas-fax-t38.xml, uas-fax-g711.xml), a SpanDSP receiver for the fax. Cases: a
 * number routed to the trunk over T.38 (human-readable output), a SIP URI called directly over
 * G.711 without ECM (--json), and requests that cannot be placed (exit 2).
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { runFaxlineCli } from "../support/child-node.ts";
import { tempDir } from "../support/test-node.ts";
import { comparePages, LETTER, renderTwoPageLetter, requireNativeBuild, requirePeer } from "./interop-support.ts";
import { cleanupPeers, startG711Receiver, startSipp, startT38Receiver } from "./peer-processes.ts";

const RECEIVER_IDENT = "FAXLINE-CLI-RX";

describe("faxline fax send", () => {
  before(() => requirePeer("sipp"));
  const dir = tempDir("faxline-fax-send-");
  const letter = path.join(dir.path, "letter.txt");
  let sentHigh: Buffer;
  before(async () => {
    requireNativeBuild();
    writeFileSync(letter, LETTER);
    sentHigh = await renderTwoPageLetter("HIGH");
  });
  after(() => {
    cleanupPeers();
    dir.remove();
  });

  function env(sippPort: number, speed: number): Record<string, string> {
    const trunks = path.join(dir.path, `trunks-${sippPort}.yaml`);
    writeFileSync(
      trunks,
      ["trunks:", "  - name: carrier-cli", `    proxy: "127.0.0.1:${sippPort}"`, '    callerNumber: "+4989998877"', "    dial:", "      format: digits", '    routes: ["+49"]', ""].join("\n"),
    );
    return {
      FAXLINE_DATA_DIR: dir.path,
      FAXLINE_LOG_LEVEL: "warn",
      FAXLINE_LINES_TRUNKS_FILE: trunks,
      FAXLINE_LINES_CLOCK_SPEED: String(speed),
      FAXLINE_LINES_LOCAL_ADDRESS: "127.0.0.1",
      FAXLINE_LINES_MEDIA_PORTS: "47400-47499",
      FAXLINE_SENDER_CSID: "CLI SENDER",
    };
  }

  it("sends a number over its trunk (T.38) and prints the outcome and statistics", { timeout: 90_000 }, async (t) => {
    const receiver = await startT38Receiver({ speed: 50, ecm: true, ident: RECEIVER_IDENT });
    const sipp = await startSipp("uas-fax-t38.xml", { keys: { rx_host: "127.0.0.1", rx_port: String(receiver.port) } });
    const run = await runFaxlineCli(["fax", "send", letter, "--to", "+49 30 1234567"], env(sipp.port, 50), 60_000);
    t.diagnostic(run.stdout);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /Rendered 2 pages \(A4 HIGH/);
    assert.match(run.stdout, /calling sip:49301234567@127\.0\.0\.1:\d+ via 127\.0\.0\.1:\d+ \(UDP\), T\.38 with ECM on up to 14400 bit\/s, TSI "CLI SENDER"/);
    assert.match(run.stdout, /switched to T\.38 \(the far end's re-INVITE\)/);
    assert.match(run.stdout, /T\.30 phase B: the receiver's DIS/);
    assert.match(run.stdout, /result\s+OK \(delivered\)/);
    assert.match(run.stdout, /pages\s+2 of 2 confirmed/);
    assert.match(run.stdout, /dialled\s+49301234567 over trunk carrier-cli/);
    assert.match(run.stdout, new RegExp(`remote CSID\\s+${RECEIVER_IDENT}`));
    assert.match(run.stdout, /transport\s+T\.38, ECM on/);
    assert.match(run.stdout, /line\s+14400 bit\/s, T\.6, 204x196 dpi/);
    assert.match(run.stdout, /T\.30\s+T30_ERR_OK/);
    const rx = (await receiver.result).result;
    assert.equal(rx?.code, 0);
    assert.equal(rx?.remote_ident, "CLI SENDER");
    const pages = await comparePages(sentHigh, readFileSync(receiver.rxFile), 2);
    assert.ok(pages.every((p) => p.differingPixels === 0 && p.blackInExtraRows === 0), JSON.stringify(pages));
    assert.equal((await sipp.exit).code, 0);
  });

  it("calls a SIP URI directly over G.711 without ECM at 9600 bit/s at most, and prints JSON", { timeout: 120_000 }, async (t) => {
    const receiver = await startG711Receiver({ speed: 20, ecm: false, ident: RECEIVER_IDENT });
    const sipp = await startSipp("uas-fax-g711.xml", { keys: { rx_host: "127.0.0.1", rx_port: String(receiver.port) } });
    const target = `sip:fax@127.0.0.1:${sipp.port}`;
    const run = await runFaxlineCli(["fax", "send", letter, "--to", target, "--transport", "g711", "--ecm", "off", "--max-rate", "9600", "--csid", "+49 30 999", "--json"], env(sipp.port, 20), 90_000);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const out = JSON.parse(run.stdout);
    t.diagnostic(JSON.stringify({ ...out, sip: undefined, media: undefined }));
    assert.equal(out.result, "delivered");
    assert.equal(out.status, "OK");
    assert.equal(out.trunk, null);
    assert.equal(out.sentToNumber, target);
    assert.equal(out.transport, "g711");
    assert.equal(out.ecm, false);
    assert.equal(out.encoding, "T.4 2-D", "without ECM SpanDSP sends T.4 2-D");
    assert.equal(out.bitRate, 9600, "V.29: the cap kept V.17 out");
    assert.equal(out.pagesDelivered, 2);
    assert.equal(out.remoteCsid, RECEIVER_IDENT);
    assert.equal(out.t30.name, "T30_ERR_OK");
    assert.ok(out.durationSecs > 0);
    const rx = (await receiver.result).result;
    assert.equal(rx?.code, 0);
    assert.equal(rx?.remote_ident, "+49 30 999");
    assert.equal(rx?.bad_rows, 0);
    const pages = await comparePages(sentHigh, readFileSync(receiver.rxFile), 2);
    assert.ok(pages.every((p) => p.differingPixels === 0 && p.blackInExtraRows === 0), JSON.stringify(pages));
    assert.equal((await sipp.exit).code, 0);
  });

  it("refuses what it cannot place: an unknown trunk, a number no trunk routes, a bad option", { timeout: 60_000 }, async () => {
    const e = env(5060, 1);
    const unknown = await runFaxlineCli(["fax", "send", letter, "--to", "+4930123456", "--trunk", "nope"], e);
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.match(unknown.stderr, /no trunk named "nope"; the trunks are: carrier-cli/);
    const noRoute = await runFaxlineCli(["fax", "send", letter, "--to", "+1 212 555 1234"], e);
    assert.equal(noRoute.code, 2, noRoute.stderr);
    assert.match(noRoute.stderr, /No trunk routes \+12125551234/);
    const badTransport = await runFaxlineCli(["fax", "send", letter, "--to", "+4930123456", "--transport", "v34"], e);
    assert.equal(badTransport.code, 2);
    assert.match(badTransport.stderr, /--transport must be t38 or g711/);
    const badRate = await runFaxlineCli(["fax", "send", letter, "--to", "+4930123456", "--max-rate", "12000"], e);
    assert.equal(badRate.code, 2);
    assert.match(badRate.stderr, /--max-rate must be one of 14400, 9600, 4800 \(bit\/s\), not "12000"/);
  });
});
