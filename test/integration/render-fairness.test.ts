/**
 * Rendering shares the node fairly (issue 13): `render.concurrency` jobs render at once, a free
 * slot goes to a customer with nothing rendering before another job of a busy customer, and a
 * text past the page limit fails while it is laid out instead of after drawing 500 pages.
 *
 * The claim order itself is tested in both dialects in store-cluster.test.ts; here a real node
 * renders real documents, SQLite only. Render times are seconds apart by construction (a page of
 * dense text takes tens of milliseconds), and the order is read from the jobs' states polled
 * every 10 ms.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { api, createTestLogin, eventually, startTestNode, waitForFinalReport, type TestNode } from "../support/test-node.ts";

/** A plain-text document of `pages` dense A4 pages (62 lines of 80 characters each). */
function denseText(name: string, pages: number) {
  const line = "The quick brown fox jumps over the lazy dog 0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const text = Array.from({ length: pages * 62 }, (_, i) => `${String(i).padStart(5, "0")} ${line}`.slice(0, 80)).join("\n");
  return { name, data: Buffer.from(text).toString("base64") };
}

describe("rendering: several jobs at once, a fair share per customer, the page limit while laying out", () => {
  let node: TestNode;
  const A = { custNr: "10001", login: "big-customer", password: "big-customer-1" };
  const B = { custNr: "10002", login: "small-customer", password: "small-customer-1" };
  const C = { custNr: "10003", login: "medium-customer", password: "medium-customer-1" };
  const client = (c: typeof A) => api(node.url, c);

  before(async () => {
    node = await startTestNode({ "render.concurrency": 2, "jobs.maxPages": 120 });
    for (const c of [A, B, C]) await createTestLogin(node, c);
  });
  after(async () => {
    await node.stop();
  });

  const stateOf = async (id: string) =>
    (await node.node.context.store.db.selectFrom("jobs").select("state").where("id", "=", id).executeTakeFirstOrThrow()).state;
  const send = async (c: typeof A, doc: ReturnType<typeof denseText>) => {
    const res = await client(c).post(`/${c.custNr}/fax`, { recipients: [{ number: "+4900000020" }], documents: [doc] });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.jobId as string;
  };

  it("gives a free slot to a waiting customer before the busy customer's older job", async () => {
    // Both slots busy: A's long job and C's shorter one.
    const a1 = await send(A, denseText("a1.txt", 60));
    await eventually(async () => ((await stateOf(a1)) === "rendering" ? true : undefined), 10_000, "A's first job to render");
    const c1 = await send(C, denseText("c1.txt", 12));
    await eventually(async () => ((await stateOf(c1)) === "rendering" ? true : undefined), 10_000, "C's job to render");
    // While they render, A sends another long job, then B a one-page job.
    const a2 = await send(A, denseText("a2.txt", 60));
    const b1 = await send(B, denseText("b1.txt", 1));
    const firstRendering = new Map<string, number>();
    let t = 0;
    while (firstRendering.size < 2 && t < 2_000) {
      for (const id of [a2, b1]) if (!firstRendering.has(id) && (await stateOf(id)) !== "pending") firstRendering.set(id, t);
      await new Promise((r) => setTimeout(r, 10));
      t++;
    }
    assert.ok(firstRendering.has(b1), "B's job was rendered");
    assert.ok(!firstRendering.has(a2) || firstRendering.get(a2)! > firstRendering.get(b1)!, `B's job went first (B at tick ${firstRendering.get(b1)}, A's second at ${firstRendering.get(a2)})`);
    const b = await waitForFinalReport(client(B), B.custNr, b1, 20_000);
    assert.equal(b.recipientStatus[0].status, "OK");
    assert.notEqual(await stateOf(a1), "completed", "B's fax was sent while A's first long job was still on its way");
    for (const [c, id] of [[A, a1], [C, c1], [A, a2]] as const) assert.equal((await waitForFinalReport(client(c), c.custNr, id, 60_000)).recipientStatus[0].status, "OK");
  });

  it("fails a text past the page limit while laying it out, before drawing a page", async () => {
    // 100 000 lines: 1 613 pages, far past the limit of 120; at tens of ms per page, drawing them would take a minute.
    const res = await client(B).post(`/${B.custNr}/fax/preview`, { recipients: [{ number: "+4900000020" }], documents: [denseText("long.txt", 1613)] });
    assert.equal(res.status, 422);
    assert.equal(res.body.reason, "document_too_large");
    assert.match(res.body.message, /long\.txt brings the fax to more than the limit of 120 pages/);
    const id = await send(B, denseText("long.txt", 1613));
    const report = await waitForFinalReport(client(B), B.custNr, id, 20_000);
    assert.equal(report.recipientStatus[0].status, "DOC_ERROR");
  });
});
