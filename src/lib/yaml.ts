/**
 * YAML parsing (the configuration and trunks files), with the `yaml` package loaded on first use:
 * imported eagerly, it costs every command about 20 ms to compile (a third of a 280 KB chunk of the
 * bundle) though most read no YAML file (embedded defaults, or a JSON configuration). Loaded with
 * require() so that the configuration's synchronous loader can stay synchronous; the bundle keeps
 * the package outside (scripts/bundle.ts), in node_modules.
 */
import { createRequire } from "node:module";

type YamlPackage = typeof import("yaml");

let yaml: YamlPackage | undefined;

/** `yaml`'s parse: the document's value; throws the package's error for text that is not YAML. */
export function parseYaml(text: string): unknown {
  yaml ??= createRequire(import.meta.url)("yaml") as YamlPackage;
  return yaml.parse(text);
}
