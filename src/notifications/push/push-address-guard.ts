/**
 * Which addresses a status push may connect to: the SSRF guard of document fetches
 * (documents/forbidden-address.ts), minus what the operator allows in push.allowTargets (tests
 * and intranet receivers). Checked for every resolved address of every push; fax-to-SFTP uses
 * the same guard with sftp.allowTargets.
 */
import { BlockList, isIP } from "node:net";
import { ConfigError } from "../../config/config-error.ts";
import { describeForbiddenAddress } from "../../documents/forbidden-address.ts";
import type { PushAddressGuard } from "./send-push.ts";

/** Builds the push address guard: the SSRF guard, minus the operator's allowed targets. */
export function pushAddressGuard(allowTargets: readonly string[], setting = "push.allowTargets"): PushAddressGuard {
  const allowed = new BlockList();
  for (const entry of allowTargets) {
    const [address, prefix] = entry.split("/", 2) as [string, string | undefined];
    const family = isIP(address);
    const bits = prefix === undefined ? null : Number(prefix);
    if (family === 0 || (bits !== null && (!Number.isInteger(bits) || bits < 0 || bits > (family === 6 ? 128 : 32)))) {
      throw new ConfigError(`Invalid configuration ${setting}: "${entry}" is not an IP address or CIDR block such as 127.0.0.1 or 10.0.0.0/8`);
    }
    const type = family === 6 ? "ipv6" : "ipv4";
    if (bits === null) allowed.addAddress(address, type);
    else allowed.addSubnet(address, bits, type);
  }
  return (address) => {
    const family = isIP(address);
    if (family !== 0 && allowed.check(address, family === 6 ? "ipv6" : "ipv4")) return null;
    return describeForbiddenAddress(address);
  };
}
