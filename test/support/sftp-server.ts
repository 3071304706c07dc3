/**
 * A real OpenSSH SFTP server for fax-to-SFTP tests: Debian's sshd (openssh-server, installed by
 * scripts/install.sh) started as a child process with a config of its own under a temporary
 * directory: its own Ed25519 host key, 127.0.0.1 on a free port, key logins of root from the
 * directory's authorized_keys, and `ForceCommand internal-sftp`. Deliveries write into `incoming`
 * (an absolute path: no chroot, since sshd wants every part of a chroot's path root-owned and not
 * writable by others, which /tmp is). Needs root, as sshd does to run as a server. The system's own
 * sshd service is not used.
 *
 * `passwordUser` lets a system user made by `systemUser()` log in with its password (sshd checks
 * it against the system's accounts, so the user is real; it owns `incoming`).
 *
 * `fileSizeLimitKiB` starts sshd with that RLIMIT_FSIZE (and SIGXFSZ ignored), so that a write
 * beyond it fails as on a full disk: the server answers SSH_FX_FAILURE, as it does for ENOSPC
 * and EDQUOT.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./child-node.ts";

export const SSHD = "/usr/sbin/sshd";

export interface SftpServerOptions {
  /** Public key lines allowed to log in as root. */
  authorizedKeys?: string[];
  fileSizeLimitKiB?: number;
  port?: number;
  /** Host key files to use instead of a new one (a restarted server keeps its identity). */
  hostKeyFrom?: SftpServer;
  /** A system user (systemUser()) that logs in with its password and owns `incoming`. */
  passwordUser?: SystemUser;
}

export interface SystemUser {
  name: string;
  password: string;
  remove(): void;
}

/**
 * A throwaway system user with a random password (useradd, chpasswd; no home, shell nologin),
 * for password logins, which sshd checks against the system's accounts. `remove()` deletes it.
 */
export function systemUser(): SystemUser {
  const name = `fxsftp${randomBytes(4).toString("hex")}`;
  const password = randomBytes(12).toString("base64url");
  const added = spawnSync("useradd", ["--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name], { encoding: "utf8" });
  if (added.status !== 0) throw new Error(`useradd failed: ${added.stderr}`);
  const set = spawnSync("chpasswd", [], { input: `${name}:${password}\n`, encoding: "utf8" });
  if (set.status !== 0) {
    spawnSync("userdel", [name]);
    throw new Error(`chpasswd failed: ${set.stderr}`);
  }
  return { name, password, remove: () => void spawnSync("userdel", [name]) };
}

export class SftpServer {
  readonly dir: string;
  /** The directory deliveries write into (absolute, as the SFTP user sees it). */
  readonly incoming: string;
  readonly hostKeyPath: string;
  port = 0;
  private child: ChildProcess | null = null;
  stderr = "";

  constructor(private readonly options: SftpServerOptions = {}) {
    this.dir = mkdtempSync(join(tmpdir(), "faxline-sftp-"));
    chmodSync(this.dir, 0o755);
    this.incoming = join(this.dir, "incoming");
    mkdirSync(this.incoming, { recursive: true });
    this.hostKeyPath = join(this.dir, "ssh_host_ed25519_key");
    if (options.hostKeyFrom) {
      writeFileSync(this.hostKeyPath, readFileSync(options.hostKeyFrom.hostKeyPath), { mode: 0o600 });
      writeFileSync(`${this.hostKeyPath}.pub`, readFileSync(`${options.hostKeyFrom.hostKeyPath}.pub`));
    } else {
      const made = spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "faxline-test-host", "-f", this.hostKeyPath]);
      if (made.status !== 0) throw new Error(`ssh-keygen failed: ${made.stderr}`);
    }
    this.setAuthorizedKeys(options.authorizedKeys ?? []);
    if (options.passwordUser) {
      const id = spawnSync("id", ["-u", options.passwordUser.name], { encoding: "utf8" });
      chownSync(this.incoming, Number(id.stdout.trim()), 0);
    }
  }

  /** The host key's fingerprint as OpenSSH's own ssh-keygen prints it (`SHA256:…`). */
  fingerprint(): string {
    const out = spawnSync("ssh-keygen", ["-l", "-E", "sha256", "-f", `${this.hostKeyPath}.pub`], { encoding: "utf8" });
    const m = /SHA256:[A-Za-z0-9+/]+/.exec(out.stdout);
    if (!m) throw new Error(`ssh-keygen -l printed no fingerprint: ${out.stdout}${out.stderr}`);
    return m[0];
  }

  setAuthorizedKeys(lines: string[]): void {
    writeFileSync(join(this.dir, "authorized_keys"), lines.map((l) => `${l}\n`).join(""), { mode: 0o600 });
  }

  async start(): Promise<void> {
    if (this.port === 0) this.port = this.options.port ?? (await freePort());
    // sshd's privilege separation directory (Debian's service makes it at boot).
    mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
    const config = join(this.dir, "sshd_config");
    writeFileSync(
      config,
      [
        `Port ${this.port}`,
        "ListenAddress 127.0.0.1",
        `HostKey ${this.hostKeyPath}`,
        "PidFile none",
        "UsePAM no",
        "StrictModes no",
        "PermitRootLogin prohibit-password",
        "PubkeyAuthentication yes",
        `PasswordAuthentication ${this.options.passwordUser ? "yes" : "no"}`,
        "KbdInteractiveAuthentication no",
        `AuthorizedKeysFile ${join(this.dir, "authorized_keys")}`,
        "Subsystem sftp internal-sftp",
        "ForceCommand internal-sftp",
        "AllowTcpForwarding no",
        "X11Forwarding no",
        "LogLevel VERBOSE",
        "",
      ].join("\n"),
    );
    const command = `${this.options.fileSizeLimitKiB !== undefined ? `trap '' XFSZ; ulimit -f ${this.options.fileSizeLimitKiB * 2}; ` : ""}exec ${SSHD} -D -e -f ${config}`;
    const child = spawn("sh", ["-c", command], { stdio: ["ignore", "ignore", "pipe"] });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`sshd did not start listening within 10 s:\n${this.stderr}`)), 10_000);
      child.stderr!.on("data", (chunk: Buffer) => {
        this.stderr += chunk.toString();
        if (this.stderr.includes(`Server listening on 127.0.0.1 port ${this.port}`)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`sshd exited with ${code}:\n${this.stderr}`));
      });
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (child === null || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    await exited;
  }

  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
