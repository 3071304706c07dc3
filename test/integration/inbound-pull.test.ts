/**
 * Receiving, first part (issue 17): topics, numbers and pull passwords; a test account that faxes
 * its own number receives the fax there; the provider's pull API (`/faxin/rest/v1`) hands faxes
 * out under a lock, acknowledges them through `ids`, `next` and `exit`, serves their pages as PDF
 * and TIFF, keeps customers apart, and never gives one fax to two pollers within its lock; the
 * retention purge deletes them after 7 days. On both store dialects.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { issueInboundCredential, addTopicNumber, createTopic } from "../../src/inbound/topics.ts";
import { REGION_NUMBER_CONTEXT } from "../../src/numbers/normalize-number.ts";
import { newReceivedFaxId } from "../../src/lib/ids.ts";
import { insertReceivedFax, purgeReceivedFaxes } from "../../src/store/queries/received-faxes.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";
import { api, createTestLogin, eventually, startTestNode, TEXT_DOC, waitForFinalReport, type TestNode } from "../support/test-node.ts";

const DAY = 86_400_000;

for (const dialect of DIALECTS) {
  describe(`${dialect}: inbound pull API`, () => {
    const store = withDialect(dialect);
    let node: TestNode;
    const acme = { custNr: "90001", login: "acme", password: "acme-password" };
    const other = { custNr: "90002", login: "other", password: "other-password" };
    let acmePassword = "";
    let otherPassword = "";
    let salesOnlyPassword = "";

    const pull = async (auth: { user: string; password: string }, path: string, method = "POST") => {
      const res = await fetch(path.startsWith("http") ? path : `${node.url}/faxin/rest/v1${path}`, {
        method,
        headers: { authorization: `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString("base64")}`, "content-type": "application/json" },
        body: method === "POST" ? "{}" : undefined,
      });
      const type = res.headers.get("content-type") ?? "";
      return { status: res.status, type, body: type.includes("json") ? ((await res.json()) as any) : Buffer.from(await res.arrayBuffer()) };
    };
    const acmeAuth = () => ({ user: acme.custNr, password: acmePassword });

    before(async () => {
      node = await startTestNode({ ...store.overrides() });
      await createTestLogin(node, acme);
      await createTestLogin(node, other);
      const db = node.node.context.store.db;
      const now = Date.now();
      await createTopic(db, { custNr: acme.custNr, name: "main" }, now);
      await createTopic(db, { custNr: acme.custNr, name: "sales", retentionDays: 30 }, now);
      await createTopic(db, { custNr: other.custNr, name: "main" }, now);
      await addTopicNumber(db, { custNr: acme.custNr, topic: "main", number: "+49 30 1234 5670" }, REGION_NUMBER_CONTEXT.DE, now);
      await addTopicNumber(db, { custNr: other.custNr, topic: "main", number: "+49 30 1234 5699" }, REGION_NUMBER_CONTEXT.DE, now);
      acmePassword = (await issueInboundCredential(db, { custNr: acme.custNr }, now)).password;
      otherPassword = (await issueInboundCredential(db, { custNr: other.custNr }, now)).password;
      salesOnlyPassword = (await issueInboundCredential(db, { custNr: acme.custNr, topics: ["sales"] }, now)).password;
    });
    after(async () => {
      await node.stop();
      await store.store().drop();
    });

    it("a test account faxing its own number receives the fax; the poller gets it with its pages as PDF and TIFF, then acknowledges it with next", async () => {
      const client = api(node.url, acme);
      const sent = await client.post(`/${acme.custNr}/fax`, { recipients: [{ number: "+49 30 1234 5670" }], documents: [TEXT_DOC] });
      assert.equal(sent.status, 201);
      await waitForFinalReport(client, acme.custNr, sent.body.jobId);
      const first = await eventually(async () => {
        const r = await pull(acmeAuth(), "/topics/main?fetch=10");
        return r.status === 200 && r.body.results.length > 0 ? r : undefined;
      }, 10_000, "the received fax");
      const [fax] = first.body.results;
      assert.match(fax.id, /^FI[A-Z0-9]{20}$/);
      assert.equal(fax.topic, "main");
      assert.equal(fax.calledNumber, "+493012345670");
      assert.equal(fax.pages, 1);
      assert.equal(fax.status, "OK");
      assert.deepEqual(fax.documents.map((d: any) => d.name), [`${fax.id}.pdf`, `${fax.id}.tif`]);

      const pdf = await pull(acmeAuth(), fax.documents[0].url, "GET");
      assert.equal(pdf.status, 200);
      assert.equal(pdf.type, "application/pdf");
      assert.equal((pdf.body as Buffer).subarray(0, 5).toString(), "%PDF-");
      const tif = await pull(acmeAuth(), fax.documents[1].url, "GET");
      assert.equal(tif.type, "image/tiff");
      const sentImage = await node.node.context.store.db.selectFrom("fax_images").select("content").where("job_id", "=", sent.body.jobId).executeTakeFirstOrThrow();
      assert.ok(Buffer.from(sentImage.content).equals(tif.body as Buffer), "the pages received are the pages sent");

      // Handed out: hidden from the next poll; `next` acknowledges it, and it never comes back.
      assert.deepEqual((await pull(acmeAuth(), "/topics/main?fetch=10")).body.results, []);
      assert.match(first.body.meta.next, new RegExp(`/faxin/rest/v1/topics/main\\?fetch=10&timeout=60&ids=${fax.id}$`));
      const next = await pull(acmeAuth(), first.body.meta.next);
      assert.equal(next.status, 200);
      assert.equal(next.body.meta.acknowledged, 1);
      const row = await node.node.context.store.db.selectFrom("received_faxes").select(["acknowledged_at"]).where("id", "=", fax.id).executeTakeFirstOrThrow();
      assert.ok(row.acknowledged_at !== null);
    });

    it("offers a fax again after its lock when it was not acknowledged; exit acknowledges without fetching", async () => {
      const db = node.node.context.store.db;
      const id = newReceivedFaxId();
      await insertReceivedFax(db, receivedRow(id, acme.custNr, "main", Date.now()));
      const handed = await pull(acmeAuth(), "/topics/main?fetch=5&timeout=1");
      assert.deepEqual(handed.body.results.map((r: any) => r.id), [id]);
      assert.deepEqual((await pull(acmeAuth(), "/topics/main?fetch=5&timeout=1")).body.results, [], "locked");
      await new Promise((r) => setTimeout(r, 1200));
      const again = await pull(acmeAuth(), "/topics/main?fetch=5&timeout=30");
      assert.deepEqual(again.body.results.map((r: any) => r.id), [id], "offered again after the lock");
      const exit = await pull(acmeAuth(), again.body.meta.exit);
      assert.equal(exit.body.meta.acknowledged, 1);
      assert.equal(exit.body.meta.fetch, 0);
      assert.deepEqual(exit.body.results, []);
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual((await pull(acmeAuth(), "/topics/main?fetch=5&timeout=0")).body.results, [], "acknowledged faxes never come back");
    });

    it("never hands one fax to two pollers at once: two concurrent pollers split 40 faxes", async () => {
      const db = node.node.context.store.db;
      const ids: string[] = [];
      const base = Date.now() - 60_000;
      for (let i = 0; i < 40; i++) {
        const id = newReceivedFaxId(base + i);
        ids.push(id);
        await insertReceivedFax(db, receivedRow(id, acme.custNr, "main", base + i));
      }
      const got: string[][] = [[], []];
      await Promise.all(
        [0, 1].map(async (p) => {
          for (let round = 0; round < 10; round++) {
            const r = await pull(acmeAuth(), "/topics/main?fetch=3&timeout=120");
            got[p]!.push(...r.body.results.map((x: any) => x.id));
          }
        }),
      );
      const all = [...got[0]!, ...got[1]!];
      assert.equal(new Set(all).size, all.length, "no fax twice");
      assert.deepEqual([...all].sort(), [...ids].sort(), "every fax once");
      const oldestFirst = (await pull(acmeAuth(), `/topics/main?fetch=0&ids=${encodeURIComponent(ids.join(","))}`)).body;
      assert.equal(oldestFirst.meta.acknowledged, 40);
    });

    it("keeps customers and topics apart, and refuses bad passwords and parameters", async () => {
      const db = node.node.context.store.db;
      const id = newReceivedFaxId();
      await insertReceivedFax(db, receivedRow(id, acme.custNr, "main", Date.now()));
      const wrong = await pull({ user: acme.custNr, password: "guess" }, "/topics/main?fetch=1");
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.error, "authentication_failed");
      const theirs = await pull({ user: other.custNr, password: otherPassword }, "/topics/main?fetch=10");
      assert.equal(theirs.status, 200);
      assert.ok(theirs.body.results.every((r: any) => r.id !== id), "the other customer's topic of the same name");
      assert.equal((await pull({ user: other.custNr, password: otherPassword }, `/files/${id}.pdf`, "GET")).status, 404);
      const salesOnly = await pull({ user: acme.custNr, password: salesOnlyPassword }, "/topics/main?fetch=1");
      assert.equal(salesOnly.status, 404);
      assert.equal(salesOnly.body.error, "topic_not_found");
      assert.equal((await pull({ user: acme.custNr, password: salesOnlyPassword }, "/topics/sales?fetch=1")).status, 200);
      assert.equal((await pull(acmeAuth(), "/topics/nope?fetch=1")).body.error, "topic_not_found");
      assert.equal((await pull(acmeAuth(), "/topics/main?fetch=101")).status, 400);
      assert.equal((await pull(acmeAuth(), "/topics/main?fetch=-1")).status, 400);
      assert.equal((await pull(acmeAuth(), "/topics/main?timeout=x")).status, 400);
      // A login of the customer may poll with its own password too, checked as the send API checks
      // it (its IP allow-list on every request).
      assert.equal((await pull({ user: acme.login, password: acme.password }, "/topics/main?fetch=0")).status, 200);
      await createTestLogin(node, { custNr: acme.custNr, login: "acme-fenced", password: "fenced-password", ipAllowList: ["203.0.113.0/24"] });
      const fenced = await pull({ user: "acme-fenced", password: "fenced-password" }, "/topics/main?fetch=0");
      assert.equal(fenced.status, 401);
      assert.equal(fenced.body.error, "ip_not_allowed");
      // One message whatever the user name was: it does not tell which customers have pull passwords.
      const unknownUser = await pull({ user: "nobody-here", password: "guess" }, "/topics/main?fetch=1");
      assert.equal(unknownUser.body.message, wrong.body.message);
      assert.equal(wrong.body.message, "Wrong user name or password");
      // The "%"-joined ids one provider SDK sends acknowledge as well.
      const two = [newReceivedFaxId(), newReceivedFaxId()];
      for (const x of two) await insertReceivedFax(db, receivedRow(x, acme.custNr, "sales", Date.now()));
      const ack = await pull(acmeAuth(), `/topics/sales?fetch=0&ids=${two.join("%25")}`);
      assert.equal(ack.body.meta.acknowledged, 2);
    });

    it("still hands out and acknowledges the faxes of a topic deleted since", async () => {
    const db = node.node.context.store.db;
    const { deleteTopic } = await import("../../src/inbound/topics.ts");
    await createTopic(db, { custNr: acme.custNr, name: "closing" }, Date.now());
    const id = newReceivedFaxId();
    await insertReceivedFax(db, receivedRow(id, acme.custNr, "closing", Date.now()));
    await deleteTopic(db, acme.custNr, "closing");
    const left = await pull(acmeAuth(), "/topics/closing?fetch=5");
    assert.deepEqual(left.body.results.map((r: any) => r.id), [id]);
    assert.equal((await pull(acmeAuth(), left.body.meta.exit)).body.meta.acknowledged, 1);
    assert.equal((await pull(acmeAuth(), "/topics/closing?fetch=5")).body.results.length, 0);
  });

  it("purges received faxes after the topic's retention (7 days by default), fetched or not", async () => {
      const db = node.node.context.store.db;
      const now = Date.now();
      const old = newReceivedFaxId();
      const young = newReceivedFaxId();
      const oldSales = newReceivedFaxId();
      await insertReceivedFax(db, receivedRow(old, acme.custNr, "main", now - 8 * DAY));
      await insertReceivedFax(db, receivedRow(young, acme.custNr, "main", now - 6 * DAY));
      await insertReceivedFax(db, receivedRow(oldSales, acme.custNr, "sales", now - 8 * DAY));
      await purgeReceivedFaxes(db, node.config.node.datacenter, now, 7, 1000);
      const left = new Set((await db.selectFrom("received_faxes").select("id").where("id", "in", [old, young, oldSales]).execute()).map((r) => r.id));
      assert.deepEqual([...left].sort(), [young, oldSales].sort(), "sales keeps its faxes 30 days");
      assert.equal((await pull(acmeAuth(), `/files/${old}.tif`, "GET")).status, 404);
    });
  });
}

function receivedRow(id: string, custNr: string, topic: string, receivedAt: number) {
  const tiff = Buffer.from("II*\u0000", "binary");
  return {
    id,
    cust_nr: custNr,
    topic,
    datacenter: "DE1",
    to_number: "+493012345670",
    from_number: "+4989111222",
    remote_csid: "+49 89 111222",
    pages: 1,
    pages_announced: 1,
    resolution: "HIGH",
    transport: "t38",
    bit_rate: 14400,
    duration_secs: 30,
    status: "OK",
    reason_code: null,
    raw_cause: null,
    received_at: receivedAt,
    image: tiff,
    image_bytes: tiff.length,
    locked_until: null,
    acknowledged_at: null,
    purged_at: null,
    source_job_id: null,
  };
}
