/**
 * How many calls a node's configuration lets run at once, against how many one core paces
 * (`lines.pacingCapacity`, measured by `npm run bench:lines`: about 100 T.38 calls within 5 ms
 * when they start together, 200 when they come and go over several media processes,
 * docs/benchmarks.md). The fax engines run in the node's media processes (media-host/), which
 * share the node's core unless the machine gives them more. Checked when the node starts: a
 * configuration that can ask for more gets a warning naming the figures, since calls beyond it
 * risk losing their pages.
 */
import type { TrunkConfig } from "../trunks/trunk-config.ts";

export interface PacingBudget {
  /** Outgoing calls at most: sender.channels, and no more than the trunks' maxCalls together. */
  outgoing: number;
  /** Receptions at most: inbound.channels, and no more than the inbound trunks' maxCalls together. */
  incoming: number;
  capacity: number;
}

export function pacingBudget(input: { trunks: readonly TrunkConfig[]; senderChannels: number; inboundChannels: number; capacity: number }): PacingBudget {
  const sum = (trunks: readonly TrunkConfig[]): number => trunks.reduce((n, t) => n + t.maxCalls, 0);
  const inbound = input.trunks.filter((t) => t.inbound);
  return {
    outgoing: Math.min(input.senderChannels, sum(input.trunks)),
    incoming: inbound.length === 0 ? 0 : Math.min(input.inboundChannels, sum(inbound)),
    capacity: input.capacity,
  };
}

/** The warning for a budget over capacity, or null. */
export function pacingWarning(budget: PacingBudget): string | null {
  const total = budget.outgoing + budget.incoming;
  if (total <= budget.capacity) return null;
  return (
    `This node may run ${total} fax calls at once (${budget.outgoing} outgoing: sender.channels and the trunks' maxCalls; ` +
    `${budget.incoming} incoming: inbound.channels and the inbound trunks' maxCalls), but one core paces about ` +
    `${budget.capacity} (lines.pacingCapacity, measured with npm run bench:lines). Calls beyond that may lose their pages: ` +
    `lower sender.channels, inbound.channels or maxCalls, or spread the calls over more nodes.`
  );
}
