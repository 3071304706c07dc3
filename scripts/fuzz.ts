/**
 * `npm run fuzz -- [--runs N] [--seed N]`: the generated API suite (test/integration/api-generated.test.ts)
 * with N runs per operation (default 100 000) and a random seed (printed, so that a failure can be
 * repeated with --seed). For nightly use; `npm test` runs the same suite with 30 runs and a fixed seed.
 */
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { runs: { type: "string", default: "100000" }, seed: { type: "string" } } });
const seed = values.seed ?? String(Math.floor(Math.random() * 2 ** 31));
console.log(`fuzz: ${values.runs} runs per operation, seed ${seed}`);
const result = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-reporter=spec", "test/integration/api-generated.test.ts"], {
  stdio: "inherit",
  env: { ...process.env, FAXLINE_FUZZ_RUNS: values.runs, FAXLINE_FUZZ_SEED: seed },
});
process.exit(result.status ?? 1);
