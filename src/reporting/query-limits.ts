/**
 * Depth and cost limits of a GraphQL query, judged before it runs (with its variables), so that a
 * query cannot make the node read or build more than an operator allows.
 *
 *  - Depth: the deepest chain of fields, introspection fields (`__schema`, `__type`, …) not
 *    counted: they read the fixed schema in memory, and the usual introspection query nests
 *    `ofType` eight deep.
 *  - Cost: every field costs 1 for each time it may appear in the answer. A list multiplies what
 *    is below it: a usage-record page by its `size`, aggregate rows by their `limit`, failing
 *    destinations by their `limit` (and their reasons by the number of failure reasons).
 */
import { Kind, valueFromASTUntyped, type DocumentNode, type FieldNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode } from "graphql";
import { FailureReasons } from "../errors/failure-reasons.ts";

export interface QueryLimits {
  maxDepth: number;
  maxCost: number;
  defaultPageSize: number;
}

export interface QueryMeasure {
  depth: number;
  cost: number;
}

const REASON_COUNT = Object.keys(FailureReasons).length;

function argument(field: FieldNode, name: string, variables: Record<string, unknown>): unknown {
  const arg = field.arguments?.find((a) => a.name.value === name);
  return arg === undefined ? undefined : valueFromASTUntyped(arg.value, variables);
}

function positive(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : fallback;
}

/** How many times the fields below `field` may appear for each time it appears itself. */
function fanOut(field: FieldNode, parentListSize: number | null, variables: Record<string, unknown>, limits: QueryLimits): { self: number; childList: number | null } {
  const name = field.name.value;
  if (name === "faxOutUdrReport" || name === "faxInUdrReport") return { self: 1, childList: positive(argument(field, "size", variables), limits.defaultPageSize) };
  if (name === "faxOutSummary" || name === "faxOutCallSummary" || name === "faxInSummary") return { self: 1, childList: positive(argument(field, "limit", variables), 1000) };
  if (name === "faxOutFailingDestinations") return { self: positive(argument(field, "limit", variables), 10), childList: null };
  if ((name === "content" || name === "rows") && parentListSize !== null) return { self: parentListSize, childList: null };
  if (name === "reasons") return { self: REASON_COUNT, childList: null };
  return { self: 1, childList: null };
}

export function measureQuery(document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown>, limits: QueryLimits): QueryMeasure {
  const fragments = new Map<string, FragmentDefinitionNode>();
  const operations: OperationDefinitionNode[] = [];
  for (const def of document.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    else if (def.kind === Kind.OPERATION_DEFINITION) operations.push(def);
  }
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations[0];
  if (!operation) return { depth: 0, cost: 0 };

  let depth = 0;
  const walk = (set: SelectionSetNode, level: number, multiplier: number, parentList: number | null, seen: ReadonlySet<string>): number => {
    let cost = 0;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const introspection = selection.name.value.startsWith("__");
        const here = introspection ? level : level + 1;
        depth = Math.max(depth, here);
        const { self, childList } = fanOut(selection, parentList, variables, limits);
        const times = multiplier * self;
        cost += times;
        if (selection.selectionSet) cost += walk(selection.selectionSet, here, times, childList, seen);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        cost += walk(selection.selectionSet, level, multiplier, parentList, seen);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        // Validation refuses cycles; this guard only keeps a bad document from looping here.
        if (fragment && !seen.has(name)) cost += walk(fragment.selectionSet, level, multiplier, parentList, new Set([...seen, name]));
      }
    }
    return cost;
  };
  const cost = walk(operation.selectionSet, 0, 1, null, new Set());
  return { depth, cost };
}
