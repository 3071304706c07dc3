/**
 * A SIP trunk for line tests: plain UDP to a proxy on 127.0.0.1 (SIPp, or a silent socket), no
 * registrar and no credentials, international dialling, every number routed. `extra` overrides
 * any field (name, routes, t38, ringTimeoutMs …).
 */
import type { TrunkConfig } from "../../src/line/trunks/trunk-config.ts";

export function testTrunk(proxyPort: number, extra: Partial<TrunkConfig> = {}): TrunkConfig {
  return {
    name: "sipp",
    proxy: { host: "127.0.0.1", port: proxyPort },
    registrar: null,
    registerExpiresMs: 3_600_000,
    domain: "carrier.test",
    transport: "udp",
    username: "",
    password: "",
    passwordEnv: null,
    callerNumber: "+4989998877",
    csid: "+49 89 998877",
    dial: { format: "international", internationalPrefix: null, strip: "", prefix: "" },
    maxCalls: 4,
    t38: true,
    ecm: true,
    routes: ["+"],
    ringTimeoutMs: 20_000,
    inbound: false,
    inboundFrom: [],
    answerDelayMs: 0,
    inboundUsername: "",
    inboundPassword: "",
    ...extra,
  };
}
