/**
 * Receiving end to end through a node (issue 17): a node whose inbound trunk answers calls over
 * its SIP line receives a fax that another SIP line (a Faxline sender) sends over loopback in
 * T.38; the reception is stored before the caller's call ends for the node's part, then the
 * provider's pull API hands it out with its pages (equal to those sent, pixel for pixel), the
 * topic's web service gets its signed notice at a real HTTP receiver, and the received-fax counter
 * moves. The number's settings from the configuration API (/config/v2) reach the line: its fax id
 * is the CSI the caller sees, and an inactive number is refused as a wrong number (404). On both
 * store dialects.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { waitingFaxes } from "../../src/inbound/inbound-settings.ts";
import { addTopicNumber, createTopic, issueInboundCredential, setTopicDeliveries } from "../../src/inbound/topics.ts";
import { SipFaxLine } from "../../src/line/sip-fax-line/sip-fax-line.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { PushReceiver } from "../support/push-receiver.ts";
import { testTrunk } from "../support/sip-trunk.ts";
import { createTestLogin, eventually, startTestNode, tempDir, type TestNode } from "../support/test-node.ts";
import { comparePages, identical, renderTwoPageLetter, requireNativeBuild, twoPageLowCallRequest } from "./interop-support.ts";

const SPEED = 20;

for (const dialect of DIALECTS) {
  describe(`${dialect}: a node receives a fax over SIP and hands it out`, () => {
    const store = withDialect(dialect);
    const dir = tempDir("faxline-rx-node-");
    const receiver = new PushReceiver();
    let node: TestNode;
    let image: Buffer;
    let pullPassword = "";
    const acme = { custNr: "91001", login: "acme-rx", password: "acme-rx-password" };

    before(async () => {
      requireNativeBuild();
      image = await renderTwoPageLetter("LOW");
      await receiver.start();
      const trunksFile = path.join(dir.path, "trunks.yaml");
      writeFileSync(
        trunksFile,
        [
          "trunks:",
          "  - name: carrier",
          "    proxy: 127.0.0.1:9",
          '    callerNumber: "+4930555000"',
          '    csid: "ACME FAX"',
          '    routes: ["+1"]',
          "    inbound: true",
          '    inboundFrom: ["127.0.0.1"]',
          "",
        ].join("\n"),
      );
      node = await startTestNode({
        ...store.overrides(),
        "lines.trunksFile": trunksFile,
        "lines.clockSpeed": SPEED,
        "lines.localAddress": "127.0.0.1",
        "lines.sipPort": 0,
        "lines.mediaPorts": "47300-47349",
        "push.allowTargets": "127.0.0.1",
      });
      await createTestLogin(node, { ...acme, isManager: true });
      const db = node.node.context.store.db;
      const now = Date.now();
      await createTopic(db, { custNr: acme.custNr, name: "main" }, now);
      await addTopicNumber(db, { custNr: acme.custNr, topic: "main", number: "+49 30 1234 5670" }, REGION_NUMBER_CONTEXT.DE, now);
      await setTopicDeliveries(db, acme.custNr, "main", { pushUrl: receiver.url("/received") });
      pullPassword = (await issueInboundCredential(db, { custNr: acme.custNr }, now)).password;
    });
    after(async () => {
      await node?.stop();
      await receiver.stop();
      await store.store().drop();
      dir.remove();
    });

    it("a T.38 fax to the topic's number is stored, pulled with its pages, pushed to the topic's web service and counted", { timeout: 90_000 }, async (t) => {
      const production = node.node.context.lines.production;
      assert.ok(production instanceof SipFaxLine, "the node runs its SIP line");
      const sender = new SipFaxLine({
        trunks: [testTrunk(production.sipLocal!.port, { name: "out", csid: "SENDER 1", dial: { format: "e164", internationalPrefix: null, strip: "", prefix: "" } })],
        region: REGION_NUMBER_CONTEXT.DE,
        localAddress: "127.0.0.1",
        sipPort: 0,
        mediaPorts: { min: 47_350, max: 47_399 },
        clockSpeed: SPEED,
        capabilityMaxAgeMs: 86_400_000,
      });
      try {
        const outcome = await sender.call({ ...twoPageLowCallRequest(image), e164: "+493012345670", dialString: "+493012345670" }, new AbortController().signal);
        t.diagnostic(JSON.stringify(outcome));
        assert.equal(outcome.result, "delivered");
        assert.equal(outcome.remoteCsid, "ACME FAX", "the node answers with its trunk's CSI");
      } finally {
        await sender.close();
      }

      const auth = `Basic ${Buffer.from(`${acme.custNr}:${pullPassword}`).toString("base64")}`;
      const batch = await eventually(async () => {
        const res = await fetch(`${node.url}/faxin/rest/v1/topics/main?fetch=10`, { method: "POST", headers: { authorization: auth, "content-type": "application/json" }, body: "{}" });
        const body = (await res.json()) as any;
        return body.results?.length > 0 ? body : undefined;
      }, 10_000, "the received fax in the topic");
      const [fax] = batch.results;
      t.diagnostic(JSON.stringify(fax));
      assert.equal(fax.topic, "main");
      assert.equal(fax.calledNumber, "+493012345670");
      assert.equal(fax.callingNumber, "+4989998877");
      assert.equal(fax.remoteCsid, "SENDER 1");
      assert.equal(fax.pages, 2);
      assert.equal(fax.status, "OK");
      assert.equal(fax.resolution, "LOW");
      // How each page came through, kept with the reception (migration 0042) and shown by the console.
      const row = await node.node.context.store.db.selectFrom("received_faxes").select("page_quality").where("id", "=", fax.id).executeTakeFirstOrThrow();
      const quality = JSON.parse(row.page_quality ?? "null") as { page: number; bitRate: number; retrains: number }[];
      assert.deepEqual(quality.map((q) => q.page), [1, 2]);
      assert.ok(quality.every((q) => q.bitRate > 0 && q.retrains === 0), row.page_quality ?? "");
      const tif = await fetch(fax.documents.find((d: any) => d.name.endsWith(".tif")).url, { headers: { authorization: auth } });
      assert.equal(tif.status, 200);
      const pages = await comparePages(image, Buffer.from(await tif.arrayBuffer()), 2);
      assert.ok(identical(pages), JSON.stringify(pages));
      const pdf = await fetch(fax.documents[0].url, { headers: { authorization: auth } });
      assert.equal(pdf.headers.get("content-type"), "application/pdf");

      const push = await eventually(async () => receiver.received("/received")[0], 15_000, "the topic's push");
      const notice = JSON.parse(push.body);
      assert.equal(notice.event, "fax.received");
      assert.equal(notice.receivedFax.id, fax.id);
      assert.ok(push.headers["webhook-id"], "the notice goes out as a Standard Webhooks message");

      const metrics = await (await fetch(`${node.url}/metrics`)).text();
      assert.match(metrics, /faxline_faxes_received_total\{[^}]*status="OK"[^}]*transport="t38"[^}]*\} 1/);
    });

    it("the configuration API's settings reach the line: the number's faxId is our CSI, an inactive number gets 404, a paused one 480, a full profile 486", { timeout: 120_000 }, async (t) => {
      const production = node.node.context.lines.production as SipFaxLine;
      const configure = async (body: unknown, resource = "numbers/%2B493012345670") => {
        const res = await fetch(`${node.url}/config/v2/inbound/${resource}`, {
          method: "PATCH",
          headers: { authorization: `Basic ${Buffer.from(`${acme.login}:${acme.password}`).toString("base64")}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        assert.equal(res.status, 200, await res.text());
      };
      const sender = new SipFaxLine({
        trunks: [testTrunk(production.sipLocal!.port, { name: "out", csid: "SENDER 1", dial: { format: "e164", internationalPrefix: null, strip: "", prefix: "" } })],
        region: REGION_NUMBER_CONTEXT.DE,
        localAddress: "127.0.0.1",
        sipPort: 0,
        mediaPorts: { min: 47_350, max: 47_399 },
        clockSpeed: SPEED,
        capabilityMaxAgeMs: 86_400_000,
      });
      const db = node.node.context.store.db;
      const stored = async () => (await db.selectFrom("received_faxes").select("id").where("to_number", "=", "+493012345670").execute()).length;
      try {
        await configure({ faxId: "ACME ORDERS" });
        const before = await stored();
        const answered = await sender.call({ ...twoPageLowCallRequest(image), e164: "+493012345670", dialString: "+493012345670" }, new AbortController().signal);
        t.diagnostic(JSON.stringify(answered));
        assert.equal(answered.result, "delivered");
        assert.equal(answered.remoteCsid, "ACME ORDERS", "the number's fax id, not the trunk's");
        await eventually(async () => ((await stored()) === before + 1 ? true : undefined), 10_000, "the reception stored");

        await configure({ active: false });
        const refused = await sender.call({ ...twoPageLowCallRequest(image), e164: "+493012345670", dialString: "+493012345670" }, new AbortController().signal);
        t.diagnostic(JSON.stringify(refused));
        assert.equal(refused.result, "failed");
        if (refused.result === "failed") assert.match(refused.rawCause ?? "", /404/);
        assert.equal(await stored(), before + 1, "nothing stored for the inactive number");

        // Paused (Faxline): the caller is asked to try again later, and nothing is stored.
        await configure({ active: null, paused: true });
        const paused = await sender.call({ ...twoPageLowCallRequest(image), e164: "+493012345670", dialString: "+493012345670" }, new AbortController().signal);
        t.diagnostic(JSON.stringify(paused));
        assert.equal(paused.result, "failed");
        if (paused.result === "failed") assert.match(paused.rawCause ?? "", /480/);
        assert.equal(await stored(), before + 1, "nothing stored for the paused number");
        await configure({ paused: null });

        // The profile's quota of faxes waiting for the customer. Its web service has taken every fax so
        // far (delivered: none waits); without it, each new fax waits until the pull API acknowledges it.
        await configure({ webservice: null }, "profiles/main");
        const pushing = async () => (await db.selectFrom("notifications").select("id").where("cust_nr", "=", acme.custNr).where("state", "!=", "delivered").execute()).length;
        await eventually(async () => ((await pushing()) === 0 ? true : undefined), 15_000, "the earlier faxes' pushes delivered");
        const waiting = await waitingFaxes(db, acme.custNr, "main", 1000);
        await configure({ maxWaitingFaxes: waiting + 1 }, "profiles/main");
        const last = await sender.call({ ...twoPageLowCallRequest(image), e164: "+493012345670", dialString: "+493012345670" }, new AbortController().signal);
        assert.equal(last.result, "delivered", "one below the quota: answered");
        await eventually(async () => ((await stored()) === before + 2 ? true : undefined), 10_000, "the reception stored");
        assert.equal(await waitingFaxes(db, acme.custNr, "main", 1000), waiting + 1);
        const full = await sender.call({ ...twoPageLowCallRequest(image), e164: "+493012345670", dialString: "+493012345670" }, new AbortController().signal);
        t.diagnostic(JSON.stringify(full));
        assert.equal(full.result, "failed");
        if (full.result === "failed") assert.match(full.rawCause ?? "", /486/);
        assert.equal(await stored(), before + 2, "nothing stored while the profile is full");
        // The customer fetches and acknowledges the waiting one: the next call is answered again.
        const auth = `Basic ${Buffer.from(`${acme.custNr}:${pullPassword}`).toString("base64")}`;
        const newest = await db.selectFrom("received_faxes").select("id").where("topic", "=", "main").where("acknowledged_at", "is", null).orderBy("received_at", "desc").executeTakeFirstOrThrow();
        const ack = await fetch(`${node.url}/faxin/rest/v1/topics/main?fetch=0&ids=${newest.id}`, { method: "POST", headers: { authorization: auth, "content-type": "application/json" }, body: "{}" });
        assert.equal(ack.status, 200, await ack.text());
        assert.equal(await waitingFaxes(db, acme.custNr, "main", 1000), waiting);
        const again = await sender.call({ ...twoPageLowCallRequest(image), e164: "+493012345670", dialString: "+493012345670" }, new AbortController().signal);
        assert.equal(again.result, "delivered", "room again after an acknowledgement");
      } finally {
        await sender.close();
        await configure({ active: null, paused: null, faxId: null });
        await configure({ maxWaitingFaxes: null, webservice: { url: receiver.url("/received") } }, "profiles/main");
      }
    });
  });
}
