/** What the console's routes need: the API's dependencies, its sessions and the authenticator. */
import type { ApiDeps } from "../api/api-deps.ts";
import type { Authenticator } from "../api/plugins/authenticate.ts";
import type { ConsoleSessions } from "./console-sessions.ts";

export interface ConsoleDeps extends ApiDeps {
  sessions: ConsoleSessions;
  authenticator: Authenticator;
  /** The data centers of this node's region: the console lists their jobs. */
  regionDatacenters: readonly string[];
}
