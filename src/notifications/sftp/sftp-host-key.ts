/**
 * SSH host keys and client keys for fax-to-SFTP: the OpenSSH SHA-256 fingerprint of a server's
 * host key (what `ssh-keygen -lf` prints, and what a delivery pins), reading the key a server
 * presents (for an operator to confirm before pinning it; nothing is sent and no login is
 * tried), checking a client's private key, and making a new one.
 */
import { createHash, createPrivateKey, randomBytes } from "node:crypto";
// ssh2 is CommonJS whose named exports Node cannot detect: taken from its default export.
import ssh2 from "ssh2";
import { describeNetworkError } from "../../net/pinned-lookup.ts";

const { Client, utils } = ssh2;

/** `SHA256:` and the unpadded base64 of the key blob's SHA-256, as OpenSSH shows it. */
export function hostKeyFingerprint(keyBlob: Buffer): string {
  return `SHA256:${createHash("sha256").update(keyBlob).digest("base64").replace(/=+$/, "")}`;
}

/** The key type named at the start of an SSH public key blob (`ssh-ed25519`, `ecdsa-sha2-nistp256`, …). */
export function hostKeyType(keyBlob: Buffer): string {
  if (keyBlob.length < 4) return "unknown";
  const length = keyBlob.readUInt32BE(0);
  return length > 0 && length < 64 && keyBlob.length >= 4 + length ? keyBlob.subarray(4, 4 + length).toString("latin1") : "unknown";
}

const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}$/;

/** A fingerprint as pinned: `SHA256:` + 43 base64 characters (trailing `=` dropped). Null when it is not one. */
export function normalizeFingerprint(text: string): string | null {
  const t = text.trim().replace(/=+$/, "");
  const withPrefix = /^sha256:/i.test(t) ? `SHA256:${t.slice(7)}` : `SHA256:${t}`;
  return FINGERPRINT.test(withPrefix) ? withPrefix : null;
}

export interface PresentedHostKey {
  fingerprint: string;
  type: string;
}

/**
 * Connects to an SSH server and returns the host key it presents to Faxline's client (the one
 * that client negotiates, so the one to pin). Ends the connection at the key: no login.
 */
export function readServerHostKey(host: string, port: number, timeoutMs: number): Promise<PresentedHostKey> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    let presented: PresentedHostKey | null = null;
    const done = () => {
      client.end();
      client.destroy();
    };
    client.on("error", (err: Error & { level?: string }) => {
      done();
      if (presented !== null) resolve(presented);
      else if (err.level === "client-timeout") reject(new Error(`${host}:${port} did not complete the SSH handshake within ${timeoutMs} ms`));
      else reject(new Error(`Could not talk to the SSH server ${host}:${port}: ${describeNetworkError(err)}`));
    });
    client.on("close", () => {
      if (presented !== null) resolve(presented);
      else reject(new Error(`${host}:${port} closed the connection before presenting a host key`));
    });
    client.connect({
      host,
      port,
      username: "faxline-host-key-check",
      readyTimeout: timeoutMs,
      hostVerifier: (key: Buffer) => {
        presented = { fingerprint: hostKeyFingerprint(key), type: hostKeyType(key) };
        return false; // stop here: the key is all that is wanted
      },
    });
  });
}

export class ClientKeyError extends Error {}

/**
 * Reads a private key (OpenSSH, PEM or PuTTY format; an encrypted one with its passphrase) and
 * returns it unencrypted, with its public key line (`ssh-ed25519 AAAA…`) for the server's
 * authorized_keys. Keys are stored unencrypted: a passphrase stored beside its key would protect
 * nothing, and decrypting an OpenSSH key (bcrypt, in JavaScript) blocks the event loop for most
 * of a second on every use.
 */
export function readClientKey(privateKey: string, passphrase: string | null): { privateKey: string; publicKey: string } {
  const parsed = utils.parseKey(privateKey, passphrase ?? undefined);
  if (parsed instanceof Error) {
    throw new ClientKeyError(
      /no passphrase given/i.test(parsed.message)
        ? "The private key is encrypted; give its passphrase as well"
        : /bad passphrase|bad decrypt|decrypt/i.test(parsed.message)
          ? "The private key's passphrase is wrong"
          : `The private key cannot be read (${parsed.message}); give an OpenSSH or PEM private key, e.g. the file ssh-keygen -t ed25519 writes`,
    );
  }
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (key === undefined || key.isPrivateKey() !== true) throw new ClientKeyError("This is a public key; give the private key (the file without .pub)");
  const publicKey = `${key.type} ${key.getPublicSSH().toString("base64")}`;
  if (passphrase === null) return { privateKey: `${privateKey.trim()}\n`, publicKey };
  // ssh2 writes RSA and ECDSA keys back as PEM it reads again; Ed25519 it writes as PKCS#8, which
  // it does not read, so that one is written in OpenSSH's own format.
  const pem = key.getPrivatePEM();
  if (key.type !== "ssh-ed25519") return { privateKey: pem, publicKey };
  const jwk = createPrivateKey(pem).export({ format: "jwk" });
  return { privateKey: openSshEd25519(Buffer.from(jwk.d!, "base64url"), Buffer.from(jwk.x!, "base64url"), key.comment ?? ""), publicKey };
}

/** An unencrypted Ed25519 key in the openssh-key-v1 format (OpenSSH's PROTOCOL.key). */
function openSshEd25519(seed: Buffer, pub: Buffer, comment: string): string {
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };
  const str = (b: Buffer | string) => {
    const buf = typeof b === "string" ? Buffer.from(b, "utf8") : b;
    return Buffer.concat([u32(buf.length), buf]);
  };
  const publicBlob = Buffer.concat([str("ssh-ed25519"), str(pub)]);
  const check = randomBytes(4);
  let section = Buffer.concat([check, check, str("ssh-ed25519"), str(pub), str(Buffer.concat([seed, pub])), str(comment)]);
  const padding: number[] = [];
  for (let i = 1; (section.length + padding.length) % 8 !== 0; i++) padding.push(i);
  section = Buffer.concat([section, Buffer.from(padding)]);
  const body = Buffer.concat([Buffer.from("openssh-key-v1\0", "latin1"), str("none"), str("none"), str(""), u32(1), str(publicBlob), str(section)]);
  const lines = body.toString("base64").match(/.{1,70}/g) ?? [];
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join("\n")}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

/** The public key line of a stored (unencrypted) private key. */
export function clientPublicKey(privateKey: string): string {
  return readClientKey(privateKey, null).publicKey;
}

/** A new Ed25519 key pair in OpenSSH format: the private key to store, the public key line for authorized_keys. */
export function newClientKey(comment: string): { privateKey: string; publicKey: string } {
  const pair = utils.generateKeyPairSync("ed25519", { comment });
  return { privateKey: pair.private, publicKey: pair.public };
}
