/**
 * A media process of `npm run bench:lines` (forked by lines-bench.ts with --processes): it takes
 * one job (its share of a step's calls), runs it with lines-sessions.ts and sends the result back.
 * Like the node's media process (src/line/media-host/media-host-process.ts) it loads only the
 * engine and the media code.
 */
import { SpandspEngine } from "../src/line/fax-engine/spandsp-engine.ts";
import { runSessions, type SessionsJob } from "./lines-sessions.ts";

const engine = SpandspEngine.load();
const job = await new Promise<SessionsJob>((resolve) => process.once("message", (m: SessionsJob) => resolve(m)));
const result = await runSessions(job, engine);
process.send!(result, () => process.exit(0));
