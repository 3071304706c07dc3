import { useEffect, useState } from "preact/hooks";
import { ApiFailure, call } from "../api.ts";
import { Notice, PageTitle, Section } from "../components.tsx";
import { formatTime, t, useLanguage } from "../i18n.ts";
import { useRepeating } from "../live.ts";
import { linkTo } from "../router.ts";
import { OperationsCharts, useHistory } from "./operations-charts.tsx";

interface Operations {
  generatedTs: string;
  region: string;
  nodes: {
    id: string;
    datacenter: string;
    roles: string[];
    version: string;
    hostname: string;
    lastSeenTs: string;
    secondsSinceHeartbeat: number;
    state: string;
    activeCalls: number;
    callsByTrunk: { trunk: string; transport: string; calls: number }[];
  }[];
  queues: { datacenter: string; counts: { kind: string; state: string; count: number }[] }[];
  runningCalls: { jobId: string; line: string; e164: string; node: string; startedTs: string; seconds: number; attemptNo: number }[];
  failureReasons: { reasonCode: string; count: number; category: string | null; description: string }[];
  failingDestinations: { e164: string; failures: number; delivered: number; lastReasonCode: string | null; lastAttemptTs: string }[];
}

/** The page refreshes as often as the node samples its charts, but at most every second and at least every 5 s. */
const refreshFor = (intervalMs: number) => Math.min(5000, Math.max(1000, intervalMs));

export function OperationsPage() {
  useLanguage();
  const [ops, setOps] = useState<Operations | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [refreshMs, setRefreshMs] = useState(5000);
  const history = useHistory(refreshMs);
  const intervalMs = history?.intervalMs;
  useEffect(() => {
    if (intervalMs !== undefined) setRefreshMs(refreshFor(intervalMs));
  }, [intervalMs]);

  useRepeating(async (alive) => {
    try {
      const v = await call<Operations>("GET", "/console/api/operations");
      if (alive()) {
        setOps(v);
        setError(null);
      }
    } catch (err) {
      if (alive()) setError(err instanceof ApiFailure ? err.message : String(err));
    }
  }, refreshMs);

  if (!ops) return error ? <Notice tone="error">{error}</Notice> : <p class="loading">{t("common.loading")}</p>;
  const openStates = ["pending", "rendering", "active", "waiting", "ready", "sending", "delivering"];
  const byTrunk = new Map<string, { trunk: string; transport: string; calls: number }>();
  for (const n of ops.nodes) {
    if (n.state !== "running") continue;
    for (const c of n.callsByTrunk) {
      const key = `${c.trunk}|${c.transport}`;
      const entry = byTrunk.get(key) ?? { trunk: c.trunk, transport: c.transport, calls: 0 };
      entry.calls += c.calls;
      byTrunk.set(key, entry);
    }
  }
  return (
    <>
      <PageTitle>{t("ops.title")}</PageTitle>
      <p class="muted" role="status">{t("ops.refreshed", { time: formatTime(ops.generatedTs), n: refreshMs / 1000 })}</p>
      {error ? <Notice tone="error">{error}</Notice> : null}
      {history ? <OperationsCharts history={history} /> : null}
      <Section title={t("ops.nodes")} id="ops-nodes">
        <table>
          <thead>
            <tr>
              <th scope="col">{t("ops.node")}</th>
              <th scope="col">{t("jobs.col.dc")}</th>
              <th scope="col">{t("ops.roles")}</th>
              <th scope="col">{t("ops.state")}</th>
              <th scope="col">{t("ops.heartbeat")}</th>
              <th scope="col" class="num">{t("ops.calls")}</th>
              <th scope="col">{t("ops.version")}</th>
            </tr>
          </thead>
          <tbody>
            {ops.nodes.map((n) => (
              <tr data-node={n.id}>
                <td class="mono">{n.id}</td>
                <td>{n.datacenter}</td>
                <td>{n.roles.join(", ")}</td>
                <td>
                  <span class={`badge ${n.state === "running" ? "badge-good" : n.state === "stopped" ? "badge-muted" : "badge-bad"}`}>{n.state}</span>
                </td>
                <td>{t("ops.secondsAgo", { n: n.secondsSinceHeartbeat })}</td>
                <td class="num">{n.activeCalls}</td>
                <td>{n.version}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <div class="grid-2">
        <Section title={t("ops.queues")} id="ops-queues">
          {ops.queues.map((q) => (
            <div>
              <h3>{q.datacenter}</h3>
              {q.counts.length === 0 ? <p class="muted">{t("ops.queueEmpty")}</p> : <table>
                <thead>
                  <tr>
                    <th scope="col">{t("ops.kind")}</th>
                    <th scope="col">{t("ops.state")}</th>
                    <th scope="col" class="num">{t("ops.count")}</th>
                  </tr>
                </thead>
                <tbody>
                  {q.counts
                    .filter((c) => openStates.includes(c.state) || c.count > 0)
                    .map((c) => (
                      <tr>
                        <td>{c.kind}</td>
                        <td>{c.state}</td>
                        <td class="num">{c.count}</td>
                      </tr>
                    ))}
                </tbody>
              </table>}
            </div>
          ))}
        </Section>
        <Section title={t("ops.byTrunk")} id="ops-by-trunk">
          {byTrunk.size === 0 ? (
            <p class="muted">{t("ops.runningNone")}</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">{t("ops.trunk")}</th>
                  <th scope="col">{t("job.col.transport")}</th>
                  <th scope="col" class="num">{t("ops.calls")}</th>
                </tr>
              </thead>
              <tbody>
                {[...byTrunk.values()].map((c) => (
                  <tr data-trunk={c.trunk} data-transport={c.transport}>
                    <td>{c.trunk === "test" ? t("ops.line.test") : c.trunk}</td>
                    <td>{c.transport.toUpperCase()}</td>
                    <td class="num">{c.calls}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Section>
        <Section title={t("ops.running")} id="ops-running">
          {ops.runningCalls.length === 0 ? (
            <p class="muted">{t("ops.runningNone")}</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">{t("ops.number")}</th>
                  <th scope="col">{t("ops.node")}</th>
                  <th scope="col">{t("ops.line")}</th>
                  <th scope="col">{t("ops.since")}</th>
                  <th scope="col">{t("jobs.col.job")}</th>
                </tr>
              </thead>
              <tbody>
                {ops.runningCalls.map((c) => (
                  <tr>
                    <td class="mono">{c.e164}</td>
                    <td class="mono">{c.node}</td>
                    <td>{c.line === "test" ? t("ops.line.test") : t("ops.line.sip")}</td>
                    <td>{t("common.seconds", { n: c.seconds })}</td>
                    <td class="mono">{c.jobId}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Section>
        <Section title={t("ops.reasons")} id="ops-reasons">
          {ops.failureReasons.length === 0 ? (
            <p class="muted">{t("ops.reasonsNone")}</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">{t("job.col.reason")}</th>
                  <th scope="col" class="num">{t("ops.count")}</th>
                </tr>
              </thead>
              <tbody>
                {ops.failureReasons.map((r) => (
                  <tr data-reason={r.reasonCode}>
                    <td>
                      <code>{r.reasonCode}</code> <span class="muted small">{r.category}</span>
                      <div class="small">{r.description}</div>
                    </td>
                    <td class="num">{r.count}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Section>
        <Section title={t("ops.failing")} id="ops-failing">
          {ops.failingDestinations.length === 0 ? (
            <p class="muted">{t("ops.failingNone")}</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">{t("ops.number")}</th>
                  <th scope="col" class="num">{t("ops.failures")}</th>
                  <th scope="col" class="num">{t("ops.delivered")}</th>
                  <th scope="col">{t("ops.lastReason")}</th>
                </tr>
              </thead>
              <tbody>
                {ops.failingDestinations.map((d) => (
                  <tr data-destination={d.e164}>
                    <td>
                      <a class="mono" {...linkTo(`/jobs?number=${encodeURIComponent(d.e164)}`)}>{d.e164}</a>
                    </td>
                    <td class="num">{d.failures}</td>
                    <td class="num">{d.delivered}</td>
                    <td>
                      <code>{d.lastReasonCode ?? "–"}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Section>
      </div>
    </>
  );
}
