/**
 * The PostgreSQL server of a test run (scripts/run-tests.sh):
 *   node --import tsx scripts/test-postgres.ts start FILE   starts a throwaway cluster, writes
 *                                                           its details to FILE, prints its URL
 *   node --import tsx scripts/test-postgres.ts stop FILE    stops it and deletes its files
 * The cluster outlives the start command (pg_ctl detaches it), so every test file of the run
 * shares it through FAXLINE_TEST_PG_URL; each suite makes a database of its own on it.
 */
import { readFileSync, rmSync } from "node:fs";
import { startPostgresCluster, stopClusterAt, writeClusterFile } from "../test/support/postgres-cluster.ts";

const [command, file] = process.argv.slice(2);
if (!file || (command !== "start" && command !== "stop")) {
  console.error("usage: test-postgres.ts start|stop FILE");
  process.exit(2);
}
if (command === "start") {
  const cluster = await startPostgresCluster({ name: "test-run" });
  writeClusterFile(file, cluster);
  // Keep it: the process exit hook of postgres-cluster.ts would remove a cluster still listed.
  process.removeAllListeners("exit");
  console.log(cluster.url());
  process.exit(0);
} else {
  try {
    const { root } = JSON.parse(readFileSync(file, "utf8")) as { root: string };
    stopClusterAt(root);
  } finally {
    rmSync(file, { force: true });
  }
}
