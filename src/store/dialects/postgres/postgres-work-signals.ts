/**
 * Cross-node wake-ups over LISTEN/NOTIFY (graphile-worker's `jobs:insert`).
 *
 * Triggers (installed by migration 0005) NOTIFY the channel `faxline_work` with the payload
 * `<kind>:<datacenter>` when, in any transaction of any node:
 *  - render: a job becomes `pending` (accepted, or sent back after a lost render lease);
 *  - send: a recipient becomes `ready` (rendered, or a retry scheduled) or leaves `sending`
 *    (a call ended, freeing a channel and its destination's slot);
 *  - notify: a notification becomes `pending` (new, retried, redelivered).
 * PostgreSQL delivers notifications at commit and folds identical ones of a transaction into
 * one, so a 1 000-recipient job wakes each node once.
 *
 * The listener has a connection of its own, to the host the pool's selector holds for the
 * primary. When it drops (the server went away, a failover), it connects and LISTENs again
 * with a backoff, moving the selector on when a host refuses; after each (re)subscription it
 * reports every kind as possibly waiting, since signals sent while it was away are lost.
 */
import type { Kysely } from "kysely";
import { sql } from "kysely";
import pg from "pg";
import { checkServerKind, clientConfig, type HostSelector, type PostgresConnectionSettings } from "./postgres-pool.ts";
import type { WorkKind, WorkSignals } from "../../store.ts";

export const WORK_CHANNEL = "faxline_work";
const KINDS: readonly WorkKind[] = ["render", "send", "notify"];

export async function installPostgresWorkSignals(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function faxline_signal_work() returns trigger language plpgsql as $$
    begin
      perform pg_notify('faxline_work', tg_argv[0] || ':' || new.datacenter);
      return null;
    end
    $$
  `.execute(db);
  await sql`
    create trigger jobs_signal_render after insert or update of state on jobs
    for each row when (new.state = 'pending') execute function faxline_signal_work('render')
  `.execute(db);
  await sql`
    create trigger recipients_signal_send after update of state on recipients
    for each row when ((new.state = 'ready' and old.state <> 'ready') or (old.state = 'sending' and new.state <> 'sending'))
    execute function faxline_signal_work('send')
  `.execute(db);
  await sql`
    create trigger notifications_signal_notify after insert or update of state, next_attempt_at on notifications
    for each row when (new.state = 'pending') execute function faxline_signal_work('notify')
  `.execute(db);
}

export function parseWorkSignal(payload: string): { kind: WorkKind; datacenter: string } | null {
  const colon = payload.indexOf(":");
  const kind = payload.slice(0, colon) as WorkKind;
  if (colon <= 0 || !KINDS.includes(kind)) return null;
  return { kind, datacenter: payload.slice(colon + 1) };
}

export function postgresWorkSignals(settings: PostgresConnectionSettings, selector: HostSelector): WorkSignals {
  return {
    async listen(onWork) {
      let closed = false;
      let timer: NodeJS.Timeout | undefined;
      let failures = 0;
      let client: pg.Client | null = null;
      const backoff = () => Math.min(250 * 2 ** Math.min(failures, 5), 5_000);
      const schedule = (ms: number) => {
        if (closed || timer !== undefined) return;
        timer = setTimeout(() => void subscribe(), ms);
        timer.unref();
      };
      const subscribe = async () => {
        timer = undefined;
        if (closed) return;
        const host = selector.current;
        let candidate: pg.Client;
        try {
          candidate = new pg.Client(clientConfig(settings, host));
        } catch {
          failures += 1;
          schedule(backoff());
          return;
        }
        // A connection that fails later ('error', then 'end') is replaced after a backoff.
        candidate.on("error", () => {});
        candidate.on("end", () => {
          if (client === candidate) client = null;
          if (!closed) schedule(backoff());
        });
        candidate.on("notification", (message) => {
          if (message.channel !== WORK_CHANNEL || message.payload === undefined) return;
          const signal = parseWorkSignal(message.payload);
          if (signal) onWork(signal.kind, signal.datacenter);
        });
        try {
          await candidate.connect();
          await checkServerKind(candidate, settings.target, host);
          await candidate.query(`listen ${WORK_CHANNEL}`);
          if (closed) {
            await candidate.end().catch(() => {});
            return;
          }
          client = candidate;
          failures = 0;
          // Whatever was signalled while the listener was away is lost: look once for all of it.
          for (const kind of KINDS) onWork(kind, "*");
        } catch {
          failures += 1;
          selector.failed(host);
          await candidate.end().catch(() => {});
          schedule(backoff());
        }
      };
      await subscribe();
      return {
        async close() {
          closed = true;
          if (timer !== undefined) clearTimeout(timer);
          await client?.end().catch(() => {});
        },
      };
    },
  };
}
