/**
 * The HTTP load loop of the API benches (bench:api, bench:cluster): `count` requests with at
 * most `concurrency` in flight over Node's global fetch (undici, keep-alive); each must answer
 * `expect`. Latency is measured per request, from sending to the whole body read.
 */
import { performance } from "node:perf_hooks";

export interface LoadResult {
  name: string;
  requests: number;
  concurrency: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  bytesPerResponse: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export async function load(name: string, count: number, concurrency: number, expect: number, request: (i: number) => Promise<Response>): Promise<LoadResult> {
  const latencies: number[] = [];
  let bytes = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        const res = await request(i);
        const body = await res.arrayBuffer();
        latencies.push(performance.now() - t0);
        bytes += body.byteLength;
        if (res.status !== expect) throw new Error(`${name}: request ${i} answered ${res.status}: ${Buffer.from(body).toString("utf8").slice(0, 300)}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    name,
    requests: count,
    concurrency,
    seconds,
    perSecond: count / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? NaN,
    bytesPerResponse: bytes / count,
  };
}
