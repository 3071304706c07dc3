/**
 * At least once, the hard way: the node is killed with SIGKILL while a status push is in flight
 * (the receiver has the request but has not answered). The restarted node logs that try as
 * abandoned and sends the push again, with the same webhook-id, so the receiver gets it and can
 * tell it is the same push.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { api, eventually, tempDir } from "../support/test-node.ts";
import { createAccountWithCli, startChildNode, stopAllChildNodes, withChildLogs, type ChildNode } from "../support/child-node.ts";
import { PushReceiver } from "../support/push-receiver.ts";
import { DIALECTS, withDialect } from "../support/dialects.ts";

const ACCOUNT = { custNr: "KILL1", login: "killer", password: "kill-pass-1" };

for (const dialect of DIALECTS) describe(`${dialect}: status push across a SIGKILL`, () => {
  const store = withDialect(dialect);
  const dir = tempDir("faxline-push-kill-");
  const receiver = new PushReceiver();
  after(async () => {
    await stopAllChildNodes();
    await receiver.stop();
    dir.remove();
  });

  it("sends a push again whose try was cut off by the node's death", async () => {
    await receiver.start();
    let calls = 0;
    receiver.on("/hook", () => (++calls === 1 ? "hang" : { status: 200 }));
    await createAccountWithCli(dir.path, ACCOUNT, { env: store.env() });
    const env = {
      ...store.env(),
      FAXLINE_NODE_ID: "push-kill-node",
      FAXLINE_PUSH_ALLOW_TARGETS: "127.0.0.1",
      FAXLINE_PUSH_TIMEOUT: "60s",
      FAXLINE_PUSH_RETRY_SCHEDULE: "100ms,100ms,100ms",
    };
    let first: ChildNode | undefined;
    let second: ChildNode | undefined;
    await withChildLogs(
      () => [first, second],
      async () => {
        first = await startChildNode({ name: "first life", dataDir: dir.path, env });
        const res = await api(first.url, ACCOUNT).post(`/${ACCOUNT.custNr}/fax`, {
          recipients: [{ number: "+4900000020" }],
          documents: [{ name: "a.txt", data: Buffer.from("kill me softly").toString("base64") }],
          statusReportOptions: { httpStatusPush: { targetUrl: receiver.url("/hook") } },
        });
        assert.equal(res.status, 201);
        const jobId = res.body.jobId as string;
        await eventually(async () => (receiver.received("/hook").length === 1 ? true : undefined), 15_000, "the push to reach the receiver");

        first.kill("SIGKILL");
        assert.equal((await first.waitForExit()).signal, "SIGKILL");

        second = await startChildNode({ name: "second life", dataDir: dir.path, env });
        const log = await eventually(
          async () => {
            const r = await api(second!.url, ACCOUNT).get(`/${ACCOUNT.custNr}/fax/reports/${jobId}/notifications`);
            return r.body.notifications?.[0]?.state === "delivered" ? r.body : undefined;
          },
          15_000,
          "the push to be delivered after the restart",
        );
        const tries = log.notifications[0].tries;
        assert.deepEqual(tries.map((t: any) => t.outcome), ["abandoned", "delivered"]);
        const pushes = receiver.received("/hook");
        assert.equal(pushes.length, 2);
        assert.equal(pushes[0]!.headers["webhook-id"], pushes[1]!.headers["webhook-id"]);
        assert.equal(pushes[0]!.body, pushes[1]!.body, "the same snapshot both times");
      },
    );
  });
});
