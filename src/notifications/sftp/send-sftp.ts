/**
 * One try of a fax-to-SFTP delivery: resolve and check the server's address (the SSRF guard of
 * pushes, with sftp.allowTargets), connect with the `ssh2` client, check the server's host key
 * against the pinned fingerprints, log in with the key or password, and write each file under a
 * temporary name (`.<name>.part`), flushed (fsync@openssh.com where offered), closed and then
 * renamed to its name (posix-rename@openssh.com where offered, which replaces a file of that name
 * left by an earlier try; plain RENAME otherwise). Files are written in the order given: the
 * caller puts the metadata file last, so a consumer that waits for it finds the document whole.
 *
 * Outcomes (docs/notifications.md, "Fax-to-SFTP"):
 *  - delivered: every file renamed into place;
 *  - retry: the server is down or unreachable, a timeout, the login refused (key or password:
 *    fixing it on either side lets the next try through), the directory missing or not
 *    writable, the server refusing a write (SSH_FX_FAILURE: a full disk or a quota, as OpenSSH
 *    reports ENOSPC, EDQUOT and EFBIG), any other SFTP error;
 *  - permanent: the host key is not the pinned one (a person must confirm the server's key:
 *    retrying cannot make an unknown key trustworthy), an address the guard refuses.
 * Messages name the server, the user and the directory, never a secret.
 */
import { isIP } from "node:net";
import ssh2, { type Client as SshClient, type ConnectConfig, type SFTPWrapper } from "ssh2";
import { bareHostname, describeLookupError, describeNetworkError, systemLookup, type ResolvedAddress } from "../../net/pinned-lookup.ts";
import type { DeliveryResult } from "../delivery-policy.ts";
import type { PushAddressGuard } from "../push/send-push.ts";
import { partName, remotePath } from "./sftp-file-names.ts";
import { hostKeyFingerprint, hostKeyType } from "./sftp-host-key.ts";

const { Client } = ssh2;

/** The private key unencrypted (settings decrypt a key given with its passphrase). */
export type SftpAuth = { method: "key"; privateKey: string } | { method: "password"; password: string };

export interface SftpTarget {
  host: string;
  port: number;
  username: string;
  auth: SftpAuth;
  /** Accepted host key fingerprints (`SHA256:…`). */
  hostKeys: readonly string[];
  /** Checked remote directory ("" the login's directory). */
  directory: string;
}

export interface SftpFile {
  name: string;
  content: Buffer;
}

export interface SftpTry {
  target: SftpTarget;
  /** Written in this order. */
  files: readonly SftpFile[];
  /** Limit for the whole try: connecting, logging in, writing and renaming (sftp.timeout). */
  timeoutMs: number;
  guard: PushAddressGuard | null;
  lookup?: (hostname: string) => Promise<ResolvedAddress[]>;
}

/** SFTP status codes (draft-ietf-secsh-filexfer-02 §7, the version OpenSSH speaks). */
export const SFTP_STATUS = { EOF: 1, NO_SUCH_FILE: 2, PERMISSION_DENIED: 3, FAILURE: 4, BAD_MESSAGE: 5, NO_CONNECTION: 6, CONNECTION_LOST: 7, OP_UNSUPPORTED: 8 } as const;

const CHUNK = 32 * 1024;

class TryFailure extends Error {
  constructor(
    readonly kind: "retry" | "permanent",
    message: string,
    readonly statusCode: number | null = null,
  ) {
    super(message);
  }
}

/** The destination as shown in the delivery log: `sftp://user@host:port/directory` (no secret). */
export function sftpTargetLabel(t: Pick<SftpTarget, "host" | "port" | "username" | "directory">): string {
  const host = isIP(t.host) === 6 ? `[${t.host}]` : t.host;
  const dir = t.directory === "" ? "/" : t.directory.startsWith("/") ? t.directory : `/~/${t.directory}`;
  return `sftp://${encodeURIComponent(t.username)}@${host}:${t.port}${dir}`;
}

export async function sendSftp(t: SftpTry): Promise<DeliveryResult> {
  const where = `${t.target.host}:${t.target.port}`;
  const client = new Client();
  let step = "connecting";
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new TryFailure("retry", `The SFTP server ${where} did not finish within ${t.timeoutMs} ms (sftp.timeout) while ${step}; is it overloaded or is the network slow?`));
    }, t.timeoutMs);
  });
  try {
    const written = await Promise.race([
      (async () => {
        const address = await resolve(t);
        const sftp = await login(client, t, address, (s) => (step = s));
        const out: string[] = [];
        for (const file of t.files) {
          step = `writing ${file.name}`;
          await writeFile(sftp, t.target, file);
          out.push(`${file.name} (${file.content.length} bytes)`);
        }
        return out;
      })(),
      timeout,
    ]);
    return {
      kind: "delivered",
      statusCode: null,
      error: null,
      responseExcerpt: `Wrote ${written.join(" and ")} to ${sftpTargetLabel(t.target)}`,
      retryAfterMs: null,
    };
  } catch (error) {
    if (error instanceof TryFailure) return { kind: error.kind, statusCode: error.statusCode, error: error.message, responseExcerpt: null, retryAfterMs: null };
    throw error;
  } finally {
    clearTimeout(timer);
    client.end();
    client.destroy();
  }
}

async function resolve(t: SftpTry): Promise<ResolvedAddress> {
  const host = bareHostname(t.target.host);
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal !== 0) addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await (t.lookup ?? systemLookup)(host);
    } catch (error) {
      throw new TryFailure("retry", `Could not reach the SFTP server ${host}:${t.target.port}: ${describeLookupError(host, error)}`);
    }
    if (addresses.length === 0) throw new TryFailure("retry", `Could not reach the SFTP server ${host}:${t.target.port}: ${host} has no addresses`);
  }
  if (t.guard !== null) {
    for (const { address } of addresses) {
      const reason = t.guard(address);
      if (reason !== null) {
        throw new TryFailure(
          "permanent",
          `Refusing to connect to the SFTP server ${host}:${t.target.port}: ${host === address ? `${address} is ${reason}` : `${host} resolves to an address deliveries may not go to`} (an operator allows it in sftp.allowTargets)`,
        );
      }
    }
  }
  // Connected by address: a DNS answer that changes after the check cannot redirect the try.
  return addresses[0]!;
}

function login(client: SshClient, t: SftpTry, address: ResolvedAddress, setStep: (s: string) => void): Promise<SFTPWrapper> {
  const { target } = t;
  const where = `${target.host}:${target.port}`;
  let presented: { fingerprint: string; type: string } | null = null;
  let accepted = false;
  let handshakeDone = false;
  const config: ConnectConfig = {
    host: address.address,
    port: target.port,
    username: target.username,
    readyTimeout: t.timeoutMs,
    hostVerifier: (key: Buffer) => {
      presented = { fingerprint: hostKeyFingerprint(key), type: hostKeyType(key) };
      accepted = target.hostKeys.includes(presented.fingerprint);
      return accepted;
    },
  };
  if (target.auth.method === "key") {
    config.privateKey = target.auth.privateKey;
  } else {
    config.password = target.auth.password;
    // Servers that take passwords only through keyboard-interactive get the password as the answer.
    config.tryKeyboard = true;
  }
  return new Promise<SFTPWrapper>((resolvePromise, reject) => {
    let settled = false;
    const fail = (f: TryFailure) => {
      if (!settled) {
        settled = true;
        reject(f);
      }
    };
    if (target.auth.method === "password") {
      const password = target.auth.password;
      client.on("keyboard-interactive", (_name, _instructions, _lang, prompts, finish) => finish(prompts.map(() => password)));
    }
    client.on("handshake", () => {
      handshakeDone = true;
      setStep("logging in");
    });
    client.on("ready", () => {
      setStep("starting SFTP");
      client.sftp((err, sftp) => {
        if (err) fail(new TryFailure("retry", `The SSH server ${where} let user ${target.username} in but did not start SFTP (${err.message}); check that its sshd_config has a Subsystem sftp line (internal-sftp) for this user`));
        else if (!settled) {
          settled = true;
          resolvePromise(sftp);
        }
      });
    });
    client.on("error", (err: Error & { level?: string }) => {
      const shown = presented as { fingerprint: string; type: string } | null;
      if (shown !== null && !accepted) {
        fail(
          new TryFailure(
            "permanent",
            `The SFTP server ${where} presented the host key ${shown.fingerprint} (${shown.type}), which is not the one pinned for this delivery (${target.hostKeys.join(", ")}). Nothing was sent. If the server's key was changed on purpose, confirm the new fingerprint with its administrator (faxline inbound topic sftp-host-key) and set it; otherwise the connection may be intercepted. Redeliver once the setting is right.`,
          ),
        );
      } else if (err.level === "client-authentication") {
        fail(
          new TryFailure(
            "retry",
            target.auth.method === "key"
              ? `The SFTP server ${where} refused the login of user ${target.username} with the delivery's private key; add its public key (shown with the topic's settings) to that user's authorized_keys on the server, or set the key the server expects`
              : `The SFTP server ${where} refused the login of user ${target.username} with the delivery's password; check the user name and password`,
          ),
        );
      } else if (err.level === "client-timeout") {
        fail(new TryFailure("retry", `The SFTP server ${where} did not complete the SSH ${handshakeDone ? "login" : "handshake"} within ${t.timeoutMs} ms (sftp.timeout)`));
      } else if (err.level === "client-socket" || !handshakeDone) {
        fail(new TryFailure("retry", `Could not talk to the SFTP server ${where}: ${sentence(describeNetworkError(err))} Check the host and port, and that the server runs and accepts connections from this node.`));
      } else {
        fail(new TryFailure("retry", `The connection to the SFTP server ${where} failed: ${err.message}`));
      }
    });
    client.on("close", () => fail(new TryFailure("retry", `The SFTP server ${where} closed the connection ${handshakeDone ? "after the handshake" : "before the SSH handshake"}`)));
    try {
      client.connect(config);
    } catch (err) {
      // ssh2 checks the private key here: a stored key it cannot read (the settings check it).
      fail(new TryFailure("retry", `The delivery's private key cannot be used: ${(err as Error).message}; set it again`));
    }
  });
}

/** Ends a clause with a full stop unless it has one. */
function sentence(text: string): string {
  return /[.?!]$/.test(text) ? text : `${text}.`;
}

type SftpError = Error & { code?: number | string };

function sftpFailure(err: SftpError, what: string, target: SftpTarget, path: string): TryFailure {
  const where = `${target.host}:${target.port}`;
  const code = typeof err.code === "number" ? err.code : null;
  const said = err.message ? ` (it answered "${err.message}")` : "";
  const dir = target.directory === "" ? "the login directory" : `the directory ${target.directory}`;
  switch (code) {
    case SFTP_STATUS.NO_SUCH_FILE:
      return new TryFailure("retry", `The SFTP server ${where} could not ${what} ${path}${said}: ${dir} does not exist for user ${target.username}; create it or correct the delivery's directory`, code);
    case SFTP_STATUS.PERMISSION_DENIED:
      return new TryFailure("retry", `The SFTP server ${where} did not let user ${target.username} ${what} ${path}${said}; allow the user to write into ${dir}`, code);
    case SFTP_STATUS.FAILURE:
      return new TryFailure("retry", `The SFTP server ${where} failed to ${what} ${path}${said}; its disk may be full or the user's quota used up (OpenSSH reports both so). Free space on the server; the delivery is retried`, code);
    default:
      return new TryFailure("retry", `The SFTP server ${where} could not ${what} ${path}: ${err.message || "an SFTP error"}${code !== null ? ` (SFTP status ${code})` : ""}`, code);
  }
}

function call<T>(run: (cb: (err: Error | null | undefined, value?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolvePromise, reject) => run((err, value) => (err ? reject(err) : resolvePromise(value as T))));
}

async function writeFile(sftp: SFTPWrapper, target: SftpTarget, file: SftpFile): Promise<void> {
  const part = remotePath(target.directory, partName(file.name));
  const final = remotePath(target.directory, file.name);
  let handle: Buffer;
  try {
    handle = await call<Buffer>((cb) => sftp.open(part, "w", cb));
  } catch (err) {
    throw sftpFailure(err as SftpError, "create", target, part);
  }
  try {
    for (let at = 0; at < file.content.length; at += CHUNK) {
      const length = Math.min(CHUNK, file.content.length - at);
      await call<void>((cb) => sftp.write(handle, file.content, at, length, at, (err) => cb(err)));
    }
    // Flushed to the server's disk where it offers fsync@openssh.com (OpenSSH 6.5 and later).
    await call<void>((cb) => {
      try {
        sftp.ext_openssh_fsync(handle, (err) => cb(err));
      } catch {
        cb(null); // not offered
      }
    });
  } catch (err) {
    await call<void>((cb) => sftp.close(handle, () => cb(null)));
    await removeQuietly(sftp, part);
    throw sftpFailure(err as SftpError, "write", target, part);
  }
  try {
    await call<void>((cb) => sftp.close(handle, (err) => cb(err)));
  } catch (err) {
    await removeQuietly(sftp, part);
    throw sftpFailure(err as SftpError, "finish writing", target, part);
  }
  try {
    await rename(sftp, part, final);
  } catch (err) {
    await removeQuietly(sftp, part);
    throw sftpFailure(err as SftpError, "rename its temporary file to", target, final);
  }
}

async function rename(sftp: SFTPWrapper, from: string, to: string): Promise<void> {
  let posix = true;
  try {
    await call<void>((cb) => {
      try {
        sftp.ext_openssh_rename(from, to, (err) => cb(err));
      } catch {
        posix = false;
        cb(null);
      }
    });
    if (posix) return;
  } catch (err) {
    throw err;
  }
  // Plain SFTP RENAME does not replace an existing file: one left by an earlier try of this
  // delivery (same fax, same name) is removed first.
  try {
    await call<void>((cb) => sftp.rename(from, to, (err) => cb(err)));
  } catch (err) {
    const exists = await call<unknown>((cb) => sftp.stat(to, cb)).then(
      () => true,
      () => false,
    );
    if (!exists) throw err;
    await call<void>((cb) => sftp.unlink(to, (e) => cb(e)));
    await call<void>((cb) => sftp.rename(from, to, (e) => cb(e)));
  }
}

async function removeQuietly(sftp: SFTPWrapper, path: string): Promise<void> {
  await call<void>((cb) => sftp.unlink(path, () => cb(null)));
}
