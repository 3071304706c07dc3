/**
 * The API load of `npm run bench:lines -- --api-load`: a client process (on the cores the bench
 * leaves to the peers) that keeps `CONCURRENCY` requests in flight against a Faxline node until
 * SIGTERM: job intake (POST /{custNr}/fax, one recipient, a short text) and report lists
 * (GET /{custNr}/fax/reports) taking turns, as bench:api measures them one at a time. On SIGTERM it
 * prints one JSON line: requests, their rate, latency p50/p99/max and failed requests.
 *
 * Usage: node --import tsx bench/api-load-worker.ts BASE_URL CUSTNR LOGIN PASSWORD
 */
import { performance } from "node:perf_hooks";
import { percentile } from "./http-load.ts";

const [base, custNr, login, password] = process.argv.slice(2);
if (base === undefined || custNr === undefined || login === undefined || password === undefined) {
  console.error("usage: api-load-worker.ts BASE_URL CUSTNR LOGIN PASSWORD");
  process.exit(2);
}
const CONCURRENCY = 16;
const headers = { "content-type": "application/json", authorization: `Basic ${Buffer.from(`${login}:${password}`).toString("base64")}` };
const text = Buffer.from("Benchmark fax.\nA short letter of two lines.\n").toString("base64");
const latencies: number[] = [];
let failed = 0;
let stopping = false;
const started = performance.now();

async function client(k: number): Promise<void> {
  for (let i = k; !stopping; i += CONCURRENCY) {
    const t0 = performance.now();
    try {
      const res =
        i % 2 === 0
          ? await fetch(`${base}/rest/v1/${custNr}/fax`, {
              method: "POST",
              headers,
              body: JSON.stringify({ recipients: [{ number: `+4930555${String(i % 100_000).padStart(5, "0")}` }], documents: [{ name: "letter.txt", data: text }] }),
            })
          : await fetch(`${base}/rest/v1/${custNr}/fax/reports`, { headers });
      await res.arrayBuffer();
      if (res.status !== (i % 2 === 0 ? 201 : 200)) failed++;
    } catch {
      failed++;
    }
    latencies.push(performance.now() - t0);
  }
}

const running = Promise.all(Array.from({ length: CONCURRENCY }, (_, k) => client(k)));
process.once("SIGTERM", () => {
  stopping = true;
  void running.then(() => {
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    console.log(JSON.stringify({ requests: latencies.length, perSecond: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies[latencies.length - 1] ?? 0, failed }));
    process.exit(0);
  });
});
