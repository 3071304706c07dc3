/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests: every line
 * is a `# HELP`, a `# TYPE` or a sample `name{label="value",…} value [timestamp]`; label values
 * may hold \\, \" and \n escapes; every sample belongs to the family its TYPE declared (a
 * histogram's _bucket, _sum and _count, a summary's _sum and _count). Anything else throws, so a
 * malformed exposition fails the test that reads it.
 */
export interface PromSample {
  /** The sample's own name (e.g. x_seconds_count for a histogram x_seconds). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromFamily {
  name: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  help: string;
  samples: PromSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf("=", i);
    if (eq === -1) throw new Error(`bad labels in: ${line}`);
    const key = text.slice(i, eq).trim();
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(key)) throw new Error(`bad label name ${key} in: ${line}`);
    if (text[eq + 1] !== '"') throw new Error(`unquoted label value in: ${line}`);
    let value = "";
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === "\\") {
        const next = text[++j];
        value += next === "n" ? "\n" : next === "\\" ? "\\" : next === '"' ? '"' : (() => { throw new Error(`bad escape in: ${line}`); })();
      } else value += text[j];
    }
    if (j >= text.length) throw new Error(`unterminated label value in: ${line}`);
    labels[key] = value;
    i = j + 1;
    if (text[i] === ",") i++;
    else if (i < text.length) throw new Error(`expected , between labels in: ${line}`);
  }
  return labels;
}

export function parsePrometheusText(text: string): Map<string, PromFamily> {
  const families = new Map<string, PromFamily>();
  const familyOf = (sample: string): PromFamily | undefined => {
    const direct = families.get(sample);
    if (direct) return direct;
    for (const suffix of ["_bucket", "_sum", "_count"]) {
      if (!sample.endsWith(suffix)) continue;
      const f = families.get(sample.slice(0, -suffix.length));
      if (f && (f.type === "histogram" || (f.type === "summary" && suffix !== "_bucket"))) return f;
    }
    return undefined;
  };
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`bad metric name: ${line}`);
      const family = families.get(name) ?? { name, type: "untyped" as const, help: "", samples: [] };
      if (kind === "HELP") family.help = rest;
      else if (["counter", "gauge", "histogram", "summary", "untyped"].includes(rest)) family.type = rest as PromFamily["type"];
      else throw new Error(`bad type: ${line}`);
      families.set(name, family);
      continue;
    }
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const [, name, labelText, valueText] = m as unknown as [string, string, string | undefined, string];
    // As Prometheus reads values (Go's ParseFloat): NaN and Inf in any letter case.
    const lower = valueText.toLowerCase();
    const value = lower === "+inf" || lower === "inf" ? Infinity : lower === "-inf" ? -Infinity : lower === "nan" ? NaN : Number(valueText);
    if (Number.isNaN(value) && lower !== "nan") throw new Error(`bad value: ${line}`);
    const family = familyOf(name);
    if (!family) throw new Error(`sample without a TYPE: ${line}`);
    family.samples.push({ name, labels: labelText ? parseLabels(labelText, line) : {}, value });
  }
  return families;
}
