/**
 * The notification delivery log and redelivery (Faxline extensions of the contract), scoped
 * like the reports to the calling login and this node's data center:
 *  - GET  /{custNr}/fax/reports/{jobId}/notifications                    every push and mail of the job, with each try
 *  - POST /{custNr}/fax/reports/{jobId}/notifications/{id}/redeliver      send it again, on a fresh retry schedule
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { ApiError } from "../../../errors/api-errors.ts";
import { toIsoSeconds } from "../../../lib/clock.ts";
import { withoutCredentials } from "../../../net/url-display.ts";
import { listJobNotifications, redeliverNotification, type NotificationWithLog } from "../../../store/queries/notifications.ts";
import { ApiErrorBodySchema } from "../../schemas/reports.ts";
import { JobNotificationsSchema, NotificationSchema, type NotificationView } from "../../schemas/notifications.ts";
import type { ApiDeps } from "../../api-deps.ts";

const JobParams = Type.Object({ custNr: Type.String(), jobId: Type.String() });
const NotificationParams = Type.Object({ custNr: Type.String(), jobId: Type.String(), notificationId: Type.String() });

function shownTarget(target: string): string {
  try {
    return withoutCredentials(new URL(target));
  } catch {
    return target;
  }
}

function view({ notification: n, tries }: NotificationWithLog): NotificationView {
  const out: NotificationView = {
    id: n.id,
    channel: n.channel,
    event: n.event,
    target: n.channel === "http" ? shownTarget(n.target) : n.target,
    state: n.state,
    attempts: n.attempts,
    createdTs: toIsoSeconds(Number(n.created_at)),
    tries: tries.map((t) => {
      const entry: NotificationView["tries"][number] = {
        attemptNo: t.attempt_no,
        startedTs: toIsoSeconds(Number(t.started_at)),
        durationMs: t.duration_ms,
        outcome: t.outcome,
      };
      if (t.status_code !== null) entry.statusCode = t.status_code;
      if (t.error !== null) entry.error = t.error;
      if (t.response_excerpt !== null) entry.responseExcerpt = t.response_excerpt;
      return entry;
    }),
  };
  if (n.state === "pending") out.nextAttemptTs = toIsoSeconds(Number(n.next_attempt_at));
  if (n.finished_at !== null) out.finishedTs = toIsoSeconds(Number(n.finished_at));
  if (n.last_error !== null) out.lastError = n.last_error;
  return out;
}

export function registerNotificationRoutes(root: FastifyInstance, deps: ApiDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = deps.store;
  const errors = { 401: ApiErrorBodySchema, 404: ApiErrorBodySchema };

  async function requireJob(request: FastifyRequest, jobId: string): Promise<void> {
    const job = await db
      .selectFrom("jobs")
      .select("id")
      .where("id", "=", jobId)
      .where("login", "=", request.account!.login)
      .where("datacenter", "=", deps.config.node.datacenter)
      .executeTakeFirst();
    if (!job) throw new ApiError("report_not_found", `No job report for ${jobId} in data center ${deps.config.node.datacenter}`);
  }

  app.get(
    "/:custNr/fax/reports/:jobId/notifications",
    {
      schema: {
        summary: "Delivery log of a job's status pushes and mails (Faxline extension)",
        operationId: "getJobNotifications",
        tags: ["notifications"],
        params: JobParams,
        response: { 200: JobNotificationsSchema, ...errors },
      },
    },
    async (request) => {
      await requireJob(request, request.params.jobId);
      const list = await listJobNotifications(db, request.params.jobId);
      return { jobId: request.params.jobId, notifications: list.map(view) };
    },
  );

  app.post(
    "/:custNr/fax/reports/:jobId/notifications/:notificationId/redeliver",
    {
      schema: {
        summary: "Send a status push or mail again, on a fresh retry schedule (Faxline extension)",
        operationId: "redeliverNotification",
        tags: ["notifications"],
        params: NotificationParams,
        response: { 202: NotificationSchema, 409: ApiErrorBodySchema, ...errors },
      },
    },
    async (request, reply) => {
      const { jobId, notificationId } = request.params;
      await requireJob(request, jobId);
      const result = await redeliverNotification(db, jobId, notificationId, deps.clock.now());
      if (result === "not_found") throw new ApiError("notification_not_found", `Job ${jobId} has no notification ${notificationId}`);
      if (result === "in_flight") throw new ApiError("notification_in_flight", `Notification ${notificationId} is being delivered right now; ask again when this try has ended`);
      deps.onNotificationQueued?.();
      const entry = (await listJobNotifications(db, jobId)).find((n) => n.notification.id === notificationId);
      // Queued, then gone: the job's report was deleted in between, and its notifications with it.
      if (entry === undefined) throw new ApiError("notification_not_found", `Job ${jobId} has no notification ${notificationId} any more (its report was deleted)`);
      return reply.code(202).send(view(entry));
    },
  );
}
