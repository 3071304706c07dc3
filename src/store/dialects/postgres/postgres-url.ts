/**
 * store.url for PostgreSQL, read the way libpq reads a connection URI
 * (https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING-URIS):
 *
 *   postgres[ql]://[USER[:PASSWORD]@]HOST[:PORT][,HOST2[:PORT]…]/DATABASE[?PARAM=VALUE&…]
 *
 * Several hosts are the members of a replicated cluster; `target_session_attrs` says which of
 * them a connection must reach: `read-write` (the default here when there are several hosts,
 * as a node writes) or `primary`: a server that is not in recovery and accepts writes;
 * `any`: the first that answers. Also read: `sslmode` (disable, prefer, require, verify-ca,
 * verify-full), `sslrootcert` (a CA file), `application_name`, `connect_timeout` (seconds).
 * Other parameters are refused, so that a misspelt one does not go unnoticed.
 *
 * `redactStoreUrl` drops the password, so that messages and `faxline nodes` can show the URL.
 */

export interface PostgresHost {
  host: string;
  port: number;
}

export type TargetSessionAttrs = "any" | "read-write" | "primary";

export interface PostgresTarget {
  hosts: PostgresHost[];
  user: string | undefined;
  password: string | undefined;
  database: string | undefined;
  targetSessionAttrs: TargetSessionAttrs;
  sslmode: "disable" | "prefer" | "require" | "verify-ca" | "verify-full";
  sslrootcert: string | undefined;
  applicationName: string | undefined;
  connectTimeoutSeconds: number | undefined;
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url.trim());
}

/** The URL without its password (user and hosts stay, so a person can tell which database). */
export function redactStoreUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/)([^@/?#]*)@/i, (_all, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(":");
    if (colon < 0) return `${scheme}${userinfo}@`;
    return `${scheme}${userinfo.slice(0, colon)}:***@`;
  });
}

export class PostgresUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PostgresUrlError";
  }
}

const SSL_MODES = ["disable", "prefer", "require", "verify-ca", "verify-full"] as const;
const KNOWN_PARAMS = new Set(["target_session_attrs", "sslmode", "sslrootcert", "application_name", "connect_timeout"]);

function decode(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new PostgresUrlError(`the ${what} is not valid percent-encoding`);
  }
}

/** Reads a postgres:// URL; throws PostgresUrlError saying what is wrong. */
export function parsePostgresUrl(url: string): PostgresTarget {
  const text = url.trim();
  const scheme = /^postgres(ql)?:\/\//i.exec(text);
  if (!scheme) throw new PostgresUrlError("it must start with postgres:// or postgresql://");
  let rest = text.slice(scheme[0].length);
  const hashAt = rest.indexOf("#");
  if (hashAt >= 0) rest = rest.slice(0, hashAt);
  const queryAt = rest.indexOf("?");
  const query = new URLSearchParams(queryAt >= 0 ? rest.slice(queryAt + 1) : "");
  if (queryAt >= 0) rest = rest.slice(0, queryAt);
  const slash = rest.indexOf("/");
  const authority = slash >= 0 ? rest.slice(0, slash) : rest;
  const database = slash >= 0 && rest.length > slash + 1 ? decode(rest.slice(slash + 1), "database name") : undefined;
  const at = authority.lastIndexOf("@");
  const userinfo = at >= 0 ? authority.slice(0, at) : "";
  const hostList = at >= 0 ? authority.slice(at + 1) : authority;
  const colon = userinfo.indexOf(":");
  const user = userinfo === "" ? undefined : decode(colon >= 0 ? userinfo.slice(0, colon) : userinfo, "user name");
  const password = colon >= 0 ? decode(userinfo.slice(colon + 1), "password") : undefined;
  if (hostList === "") throw new PostgresUrlError("it names no host (postgres://HOST[:PORT][,HOST2…]/DATABASE)");
  const hosts = hostList.split(",").map((entry): PostgresHost => {
    const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d+))?$/.exec(entry);
    if (!match) throw new PostgresUrlError(`the host "${entry}" is not HOST or HOST:PORT`);
    const port = match[2] === undefined ? 5432 : Number(match[2]);
    if (port < 1 || port > 65535) throw new PostgresUrlError(`the port of "${entry}" is out of range`);
    return { host: match[1]!.replace(/^\[|\]$/g, ""), port };
  });
  for (const key of query.keys()) {
    if (!KNOWN_PARAMS.has(key)) throw new PostgresUrlError(`the parameter "${key}" is not one Faxline reads (${[...KNOWN_PARAMS].join(", ")})`);
  }
  const tsa = query.get("target_session_attrs") ?? (hosts.length > 1 ? "read-write" : "any");
  if (tsa !== "any" && tsa !== "read-write" && tsa !== "primary") {
    throw new PostgresUrlError(`target_session_attrs=${tsa} is not one of read-write, primary, any (a node needs a server that accepts writes)`);
  }
  const sslmode = query.get("sslmode") ?? "prefer";
  if (!(SSL_MODES as readonly string[]).includes(sslmode)) throw new PostgresUrlError(`sslmode=${sslmode} is not one of ${SSL_MODES.join(", ")}`);
  const timeout = query.get("connect_timeout");
  if (timeout !== null && !/^\d+$/.test(timeout)) throw new PostgresUrlError(`connect_timeout=${timeout} is not a whole number of seconds`);
  return {
    hosts,
    user,
    password,
    database,
    targetSessionAttrs: tsa,
    sslmode: sslmode as PostgresTarget["sslmode"],
    sslrootcert: query.get("sslrootcert") ?? undefined,
    applicationName: query.get("application_name") ?? undefined,
    connectTimeoutSeconds: timeout === null ? undefined : Number(timeout),
  };
}
