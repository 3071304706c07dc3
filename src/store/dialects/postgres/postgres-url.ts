/**
 * store.url for PostgreSQL: `postgres://` or `postgresql://`, one or several hosts
 * (`postgres://user:pass@db1:5432,db2:5432/faxline?target_session_attrs=read-write`), with the
 * query parameters postgres.js knows (sslmode, target_session_attrs, application_name…).
 * `redactStoreUrl` drops the password, so that messages and `faxline nodes` can show the URL.
 */

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url.trim());
}

/** The URL without its password (user and hosts stay, so a person can tell which database). */
export function redactStoreUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/)([^@/?#]*)@/i, (_all, scheme: string, userinfo: string) => {
    const user = userinfo.split(":")[0] ?? "";
    return `${scheme}${user === "" ? "" : `${user}:***`}@`;
  });
}

/** Checks the shape of a PostgreSQL URL; returns what is wrong with it, or null. */
export function postgresUrlProblem(url: string): string | null {
  if (!isPostgresUrl(url)) return "it must start with postgres:// or postgresql://";
  const rest = url.trim().replace(/^postgres(ql)?:\/\//i, "");
  const authority = rest.split(/[/?#]/)[0] ?? "";
  const hosts = authority.slice(authority.lastIndexOf("@") + 1);
  if (hosts === "") return "it names no host (postgres://HOST[:PORT][,HOST2…]/DATABASE)";
  for (const host of hosts.split(",")) {
    const match = /^(\[[0-9a-fA-F:.]+\]|[^:]+)(?::(\d+))?$/.exec(host);
    if (!match) return `the host "${host}" is not HOST or HOST:PORT`;
    if (match[2] !== undefined && (Number(match[2]) < 1 || Number(match[2]) > 65535)) return `the port of "${host}" is out of range`;
  }
  const query = rest.includes("?") ? new URLSearchParams(rest.slice(rest.indexOf("?") + 1)) : new URLSearchParams();
  const tsa = query.get("target_session_attrs");
  const allowed = ["read-write", "read-only", "primary", "standby", "prefer-standby", "any"];
  if (tsa !== null && !allowed.includes(tsa)) return `target_session_attrs=${tsa} is not one of ${allowed.join(", ")}`;
  return null;
}
