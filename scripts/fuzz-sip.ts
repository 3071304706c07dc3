/**
 * `npm run fuzz:sip -- [--runs N] [--seed S] [--batch B] [--dump FILE] [--transports udp,tcp,tls]`:
 * the SIP robustness suite (test/interop/sip-robustness.test.ts) with N generated messages in all
 * (default 100 000, split evenly over the transports, by default UDP, TCP and TLS), a fax received after every B of them per transport (default
 * 5 000), and a random seed unless one is given (printed, so that a failure can be repeated with
 * --seed). A failing window's cases are written to FILE (default /tmp/faxline-sip-fuzz-<seed>.json).
 * For nightly use; `npm test` runs the same suite with 600 messages per transport and a fixed seed.
 */
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { runs: { type: "string", default: "100000" }, seed: { type: "string" }, batch: { type: "string", default: "5000" }, dump: { type: "string" }, transports: { type: "string", default: "udp,tcp,tls" } } });
const total = Number(values.runs);
const batch = Number(values.batch);
if (!Number.isInteger(total) || total < 3) throw new Error(`--runs must be a whole number of at least 3, got ${values.runs}`);
if (!Number.isInteger(batch) || batch < 1) throw new Error(`--batch must be a whole number of at least 1, got ${values.batch}`);
const seed = values.seed ?? String(Math.floor(Math.random() * 2 ** 31));
const transports = values.transports.split(",");
if (transports.length === 0 || transports.some((t) => !["udp", "tcp", "tls"].includes(t))) throw new Error(`--transports takes udp, tcp, tls (comma-separated), got ${values.transports}`);
const perTransport = Math.ceil(total / transports.length);
const dump = values.dump ?? `/tmp/faxline-sip-fuzz-${seed}.json`;
console.log(`fuzz:sip: ${perTransport} messages per transport (${transports.join(", ")}), a fax after every ${batch}, seed ${seed}; a failing window goes to ${dump}`);
const result = spawnSync("bash", ["scripts/run-tests.sh", "test/interop/sip-robustness.test.ts"], {
  stdio: "inherit",
  env: {
    ...process.env,
    FAXLINE_TEST_DIALECTS: "sqlite",
    FAXLINE_SIP_FUZZ_RUNS: String(perTransport),
    FAXLINE_SIP_FUZZ_BATCH: String(batch),
    FAXLINE_SIP_FUZZ_SEED: seed,
    FAXLINE_SIP_FUZZ_DUMP: dump,
    FAXLINE_SIP_FUZZ_TRANSPORTS: transports.join(","),
  },
});
process.exit(result.status ?? 1);
