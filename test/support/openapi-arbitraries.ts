/**
 * fast-check arbitraries from the OpenAPI 3.0 document the server serves (/openapi.json): for
 * each operation, requests whose path parameters, query, headers and body are drawn from its
 * declared schema, mixed with values that break it (wrong types, garbage, edge strings), so that
 * a generated suite covers every route without a hand-written case per route.
 *
 * Covers the subset of JSON Schema that the TypeBox schemas emit: object (properties, required),
 * array (items, minItems, maxItems), string (minLength, maxLength, pattern, enum), integer and
 * number (minimum, maximum), boolean, `nullable`, anyOf / oneOf, const. Anything else becomes an
 * arbitrary JSON value.
 */
import fc from "fast-check";

export interface OpenApiParameter {
  in: "path" | "query" | "header";
  name: string;
  required?: boolean;
  schema?: JsonSchema;
}

export interface OpenApiOperation {
  method: string;
  /** The OpenAPI path template, e.g. /rest/v1/{custNr}/fax/reports/{jobId}. */
  path: string;
  operationId: string;
  parameters: OpenApiParameter[];
  body: JsonSchema | null;
  /** Declared response statuses. */
  responses: number[];
}

export type JsonSchema = {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  nullable?: boolean;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
};

/** The operations of an OpenAPI document under `prefix`. */
export function operationsOf(doc: { paths: Record<string, Record<string, any>> }, prefix: string): OpenApiOperation[] {
  const out: OpenApiOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith(prefix)) continue;
    for (const [method, op] of Object.entries(item)) {
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId ?? `${method} ${path}`,
        parameters: (op.parameters ?? []) as OpenApiParameter[],
        body: op.requestBody?.content?.["application/json"]?.schema ?? null,
        responses: Object.keys(op.responses ?? {}).map(Number),
      });
    }
  }
  return out;
}

/** Strings that have broken parsers elsewhere: empty, blanks, controls, escapes, non-BMP, long. */
export const edgeStrings = fc.constantFrom(
  "",
  " ",
  "\t\r\n",
  "%",
  "%ff%fe",
  "%2F..%2F",
  "../../etc/passwd",
  "null",
  "0",
  "-1",
  "1e309",
  "😀🇩🇪",
  "\u202e\u200b",
  "\u0000",
  "<script>alert(1)</script>",
  "' OR 1=1 --",
  "${jndi:ldap://x}",
  "+4900000020",
  "004989000000000",
  "SGVsbG8gZmF4IQo=",
  "FJ0000000000000000000A",
  "x".repeat(10_000),
);

const anyJson = fc.jsonValue({ maxDepth: 3 });

/** Values of `schema`: mostly valid, sometimes edge strings or other JSON types. */
export function fromSchema(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return anyJson;
  const valid = validFromSchema(schema, depth);
  const withNull = schema.nullable ? fc.oneof(valid, fc.constant(null)) : valid;
  // One in ten values breaks the schema on purpose.
  return fc.oneof({ weight: 9, arbitrary: withNull }, { weight: 1, arbitrary: fc.oneof(edgeStrings, anyJson) });
}

function validFromSchema(schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.oneof(fc.constantFrom(...schema.enum), ...schema.enum.filter((e): e is string => typeof e === "string").map((e) => fc.constant(e.toLowerCase())));
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives && alternatives.length > 0) return fc.oneof(...alternatives.map((s) => fromSchema(s, depth + 1)));
  switch (schema.type) {
    case "object": {
      const props = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, sub] of Object.entries(props)) record[name] = fromSchema(sub, depth + 1);
      const requiredKeys = Object.keys(props).filter((k) => required.has(k));
      return fc.record(record, { requiredKeys });
    }
    case "array":
      return fc.array(fromSchema(schema.items, depth + 1), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, 4) });
    case "string": {
      if (schema.pattern) {
        return fc.oneof(fc.stringMatching(new RegExp(schema.pattern)).map((s) => s.slice(0, schema.maxLength ?? s.length)), edgeStrings);
      }
      return fc.oneof(
        { weight: 3, arbitrary: fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40), unit: "binary" }) },
        { weight: 1, arbitrary: edgeStrings },
      );
    }
    case "integer":
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
    case "number":
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    default:
      return anyJson;
  }
}
