/**
 * A configuration that cannot work: a bad value, a missing file, an unreachable store. The CLI
 * prints its message (which names the key and the cause) without a stack trace and exits 1.
 */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}
