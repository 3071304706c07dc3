/**
 * fetchReference against real HTTP servers on 127.0.0.1 (and ::1 where available).
 *
 * This sandbox forbids traffic to anything but loopback, and the SSRF guard must refuse before
 * connecting anyway. A tripwire around net.Socket#connect (it passes every call through
 * unchanged) records each connection attempt and blocks any whose target, literal or handed out
 * by the pinned lookup, is not loopback, so a guard bug fails the test instead of sending a
 * packet. Public addresses appear only as lookup answers that the guard must refuse, and in the
 * pure isForbiddenAddress table.
 */
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import type { AddressInfo, LookupFunction } from "node:net";
import {
  checkReferenceUrl,
  fetchReference,
  fetchReferenceWithGuard,
  isForbiddenAddress,
} from "../../src/documents/fetch-reference.ts";
import type { FetchReferenceOptions, FetchReferenceResult } from "../../src/documents/fetch-reference.ts";
import { describeForbiddenAddress } from "../../src/documents/forbidden-address.ts";

// --- tripwire --------------------------------------------------------------------------------

const connectAttempts: string[] = [];
const tripwireViolations: string[] = [];
const isLoopback = (address: string): boolean => address === "127.0.0.1" || address === "::1";
const socketPrototype = net.Socket.prototype as unknown as { connect: (...args: unknown[]) => unknown };
const originalConnect = socketPrototype.connect;

function installTripwire(): void {
  socketPrototype.connect = function (this: net.Socket, ...args: unknown[]): unknown {
    const first = args[0];
    const options = (Array.isArray(first) ? first[0] : first) as { host?: unknown; lookup?: LookupFunction } | undefined;
    if (options !== undefined && typeof options === "object" && options !== null) {
      const host = typeof options.host === "string" ? options.host : "localhost";
      connectAttempts.push(host);
      if (net.isIP(host) !== 0 && !isLoopback(host)) {
        tripwireViolations.push(host);
        throw new Error(`tripwire: refusing to connect to ${host}`);
      }
      if (net.isIP(host) === 0) {
        const inner = options.lookup;
        if (inner === undefined) {
          tripwireViolations.push(`${host} (system DNS)`);
          throw new Error(`tripwire: ${host} would be resolved by the system resolver`);
        }
        options.lookup = ((hostname, lookupOptions, callback) => {
          inner(hostname, lookupOptions, (error, address, family) => {
            const list = Array.isArray(address) ? address.map((a) => a.address) : [address];
            const bad = error === null ? list.filter((a) => !isLoopback(a)) : [];
            if (bad.length > 0) {
              tripwireViolations.push(bad.join(","));
              callback(new Error(`tripwire: ${hostname} -> ${bad.join(",")}`), "", 0);
              return;
            }
            callback(error, address, family);
          });
        }) as LookupFunction;
      }
    }
    return originalConnect.apply(this, args);
  };
}

// --- test server -----------------------------------------------------------------------------

let server: http.Server;
let base: string; // http://127.0.0.1:PORT
let port: number;
let streamedBytes = 0;
let streamClosed: Promise<void> = Promise.resolve();

function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://x");
  const path = url.pathname;
  if (path === "/doc.pdf") {
    res.writeHead(200, { "content-type": "application/pdf" });
    res.end("%PDF-1.4 test document");
  } else if (path === "/no-type") {
    res.end("bytes without a type");
  } else if (path === "/headers") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(req.headers));
  } else if (path === "/missing") {
    res.writeHead(404);
    res.end("not here");
  } else if (path.startsWith("/hop/")) {
    const left = Number(path.slice("/hop/".length));
    if (left <= 0) {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("arrived");
    } else {
      res.writeHead(left % 2 === 0 ? 302 : 307, { location: `/hop/${left - 1}` });
      res.end();
    }
  } else if (path === "/redirect") {
    res.writeHead(302, { location: url.searchParams.get("to") ?? "/" });
    res.end();
  } else if (path === "/exact") {
    res.end(Buffer.alloc(Number(url.searchParams.get("n") ?? "0"), 0x41));
  } else if (path === "/big-declared") {
    // Declares 10 MB, sends the headers and then nothing: only a Content-Length check ends this quickly.
    res.writeHead(200, { "content-length": String(10_000_000) });
    res.flushHeaders();
  } else if (path === "/big-stream") {
    // Chunked, no length, endless: only a client that stops reading ends this.
    streamedBytes = 0;
    streamClosed = new Promise((resolve) => res.on("close", () => resolve()));
    res.writeHead(200, { "content-type": "application/octet-stream" });
    const chunk = Buffer.alloc(16 * 1024, 0x42);
    const pump = (): void => {
      while (!res.destroyed) {
        streamedBytes += chunk.length;
        if (!res.write(chunk)) {
          res.once("drain", pump);
          return;
        }
      }
    };
    pump();
  } else if (path === "/hang") {
    // never answers
  } else if (path === "/slow-body") {
    res.writeHead(200, { "content-length": "100" });
    res.write("only the first bytes");
  } else if (path === "/cut") {
    res.writeHead(200, { "content-length": "100" });
    res.write("ten bytes!", () => res.socket?.destroy());
  } else {
    res.writeHead(500);
    res.end();
  }
}

async function listen(host: string): Promise<http.Server> {
  const s = http.createServer(handle);
  await new Promise<void>((resolve, reject) => {
    s.once("error", reject);
    s.listen(0, host, () => resolve());
  });
  return s;
}

async function closeServer(s: http.Server): Promise<void> {
  s.closeAllConnections();
  await new Promise<void>((resolve) => s.close(() => resolve()));
}

// --- helpers ---------------------------------------------------------------------------------

/** A lookup answering from a fixed table; unknown names fail like DNS does. Counts calls. */
function tableLookup(table: Record<string, string[]>): NonNullable<FetchReferenceOptions["lookup"]> & { calls: string[] } {
  const calls: string[] = [];
  const fn = async (hostname: string): Promise<{ address: string; family: 4 | 6 }[]> => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: net.isIP(address) === 6 ? 6 : 4 }));
  };
  return Object.assign(fn, { calls });
}

const noDns = tableLookup({});

function options(overrides: Partial<FetchReferenceOptions> = {}): FetchReferenceOptions {
  return { timeoutMs: 3000, maxBytes: 1_000_000, allowPrivateTargets: true, maxRedirects: 3, lookup: noDns, ...overrides };
}

function assertFailure(result: FetchReferenceResult, kind: string, pattern?: RegExp): string {
  assert.equal(result.ok, false, `expected a ${kind} failure, got success`);
  if (result.ok) throw new Error("unreachable");
  assert.equal(result.kind, kind, result.message);
  if (pattern !== undefined) assert.match(result.message, pattern);
  return result.message;
}

/** Asserts that running `body` made no connection attempt at all. */
async function withoutConnecting<T>(body: () => Promise<T>): Promise<T> {
  const before = connectAttempts.length;
  const value = await body();
  assert.deepEqual(connectAttempts.slice(before), [], "the guard must refuse before connecting");
  return value;
}

const T = { timeout: 10_000 };

// --- tests -----------------------------------------------------------------------------------

describe("fetchReference", () => {
  before(async () => {
    installTripwire();
    server = await listen("127.0.0.1");
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
  });

  after(async () => {
    socketPrototype.connect = originalConnect;
    await closeServer(server);
    assert.deepEqual(tripwireViolations, [], "no connection may leave loopback");
  });

  describe("successful fetches (allowPrivateTargets: true)", () => {
    it("fetches a document with its content type", T, async () => {
      const result = await fetchReference(`${base}/doc.pdf`, options());
      assert.ok(result.ok, result.ok ? "" : result.message);
      assert.equal(result.bytes.toString(), "%PDF-1.4 test document");
      assert.equal(result.contentType, "application/pdf");
      assert.equal(result.finalUrl, `${base}/doc.pdf`);
    });

    it("gives contentType null when the server sends none", T, async () => {
      const result = await fetchReference(`${base}/no-type`, options());
      assert.ok(result.ok);
      assert.equal(result.contentType, null);
    });

    it("connects to the resolved address while Host keeps the name; sends user agent and Basic credentials", T, async () => {
      const lookup = tableLookup({ "docs.example.test": ["127.0.0.1"] });
      const result = await fetchReference(
        `http://alice:s%3Acret@docs.example.test:${port}/headers?sig=abc`,
        options({ lookup, userAgent: "Faxline-test/1" }),
      );
      assert.ok(result.ok, result.ok ? "" : result.message);
      const headers = JSON.parse(result.bytes.toString()) as Record<string, string>;
      assert.equal(headers.host, `docs.example.test:${port}`);
      assert.equal(headers["user-agent"], "Faxline-test/1");
      assert.equal(headers.authorization, `Basic ${Buffer.from("alice:s:cret").toString("base64")}`);
      assert.deepEqual(lookup.calls, ["docs.example.test"]);
      assert.equal(result.finalUrl, `http://docs.example.test:${port}/headers?sig=abc`, "finalUrl drops credentials");
    });

    it("fetches from [::1] when IPv6 loopback is available", T, async (t) => {
      let v6: http.Server;
      try {
        v6 = await listen("::1");
      } catch {
        t.skip("no IPv6 loopback here");
        return;
      }
      try {
        const v6Port = (v6.address() as AddressInfo).port;
        const result = await fetchReference(`http://[::1]:${v6Port}/doc.pdf`, options());
        assert.ok(result.ok, result.ok ? "" : result.message);
        assert.equal(result.bytes.toString(), "%PDF-1.4 test document");
      } finally {
        await closeServer(v6);
      }
    });

    it("accepts a body of exactly maxBytes", T, async () => {
      const result = await fetchReference(`${base}/exact?n=5000`, options({ maxBytes: 5000 }));
      assert.ok(result.ok);
      assert.equal(result.bytes.length, 5000);
    });

    it("leaves no timer behind", T, async () => {
      const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
      const before = timers();
      const result = await fetchReference(`${base}/doc.pdf`, options({ timeoutMs: 60_000 }));
      assert.ok(result.ok);
      assert.equal(timers(), before);
    });
  });

  describe("SSRF guard (allowPrivateTargets: false)", () => {
    const guarded = (overrides: Partial<FetchReferenceOptions> = {}): FetchReferenceOptions =>
      options({ allowPrivateTargets: false, ...overrides });

    it("refuses 127.0.0.1 with an actionable message", T, async () => {
      const result = await withoutConnecting(() => fetchReference(`${base}/doc.pdf`, guarded()));
      const message = assertFailure(result, "forbidden_target");
      assert.equal(
        message,
        `Refusing to fetch ${base}/doc.pdf: 127.0.0.1 is a loopback address (set documents.fetchAllowPrivateTargets to allow it)`,
      );
    });

    it("refuses localhost without resolving it", T, async () => {
      const lookup = tableLookup({ localhost: ["127.0.0.1"] });
      for (const url of [`http://localhost:${port}/doc.pdf`, `http://LOCALHOST.:${port}/x`, `http://app.localhost:${port}/x`]) {
        const result = await withoutConnecting(() => fetchReference(url, guarded({ lookup })));
        assertFailure(result, "forbidden_target", /loopback/);
      }
      assert.deepEqual(lookup.calls, []);
    });

    it("refuses [::1] and IPv4-mapped loopback literals", T, async () => {
      for (const url of [`http://[::1]:${port}/x`, `http://[::ffff:127.0.0.1]:${port}/x`, `http://[::]:${port}/x`, "http://0.0.0.0/x"]) {
        const result = await withoutConnecting(() => fetchReference(url, guarded()));
        assertFailure(result, "forbidden_target", /Refusing to fetch/);
      }
    });

    it("refuses private, link-local and CGNAT addresses a name resolves to", T, async () => {
      const cases: Record<string, string> = {
        "rfc1918-10.example.test": "10.0.0.5",
        "rfc1918-192.example.test": "192.168.1.20",
        "rfc1918-172.example.test": "172.16.4.4",
        "metadata.example.test": "169.254.169.254",
        "cgnat.example.test": "100.64.0.1",
        "ula.example.test": "fd12:3456::1",
        "linklocal6.example.test": "fe80::1",
      };
      const lookup = tableLookup(Object.fromEntries(Object.entries(cases).map(([name, address]) => [name, [address]])));
      for (const [name, address] of Object.entries(cases)) {
        const result = await withoutConnecting(() => fetchReference(`https://${name}/doc.pdf?token=secret`, guarded({ lookup })));
        const message = assertFailure(result, "forbidden_target");
        // The client is told the target is not allowed, never what the name resolved to (no DNS oracle);
        // the operator's log gets the address and why.
        assert.equal(message, `Refusing to fetch https://${name}/doc.pdf: ${name} resolves to an address that documents may not be fetched from (set documents.fetchAllowPrivateTargets to allow it)`);
        assert.ok(!message.includes(address), "the resolved address stays out of the client's message");
        assert.ok(!result.ok && result.operatorDetail?.startsWith(`${name} resolves to ${address}, which is `), !result.ok ? result.operatorDetail : "");
        assert.ok(!message.includes("secret"), "the query string stays out of messages");
      }
      assert.equal(lookup.calls.length, Object.keys(cases).length);
    });

    it("refuses a name that resolves to one public and one private address", T, async () => {
      for (const answer of [["93.184.216.34", "10.1.2.3"], ["10.1.2.3", "93.184.216.34"]]) {
        const lookup = tableLookup({ "mixed.example.test": answer });
        const result = await withoutConnecting(() => fetchReference("http://mixed.example.test/doc.pdf", guarded({ lookup })));
        const message = assertFailure(result, "forbidden_target", /resolves to an address that documents may not be fetched from/);
        assert.ok(!message.includes("10.1.2.3"));
        assert.equal(!result.ok && result.operatorDetail, "mixed.example.test resolves to 10.1.2.3, which is a private address");
      }
    });

    it("checkReferenceUrl refuses literal and localhost targets but leaves names for fetch time", () => {
      const literal = checkReferenceUrl("http://169.254.169.254/latest/meta-data/", false);
      assert.equal(literal.ok, false);
      if (!literal.ok) {
        assert.equal(literal.kind, "forbidden_target");
        assert.match(literal.message, /169\.254\.169\.254 is a link-local address \(the cloud metadata service\)/);
      }
      assert.equal(checkReferenceUrl("http://localhost/x", false).ok, false);
      assert.equal(checkReferenceUrl("http://[::ffff:7f00:1]/x", false).ok, false);
      assert.equal(checkReferenceUrl("http://2130706433/x", false).ok, false, "numeric IPv4 forms are normalised first");
      assert.equal(checkReferenceUrl("http://0x7f.1/x", false).ok, false);
      assert.equal(checkReferenceUrl("https://docs.example.test/a.pdf", false).ok, true);
      assert.equal(checkReferenceUrl("http://127.0.0.1/x", true).ok, true);
    });
  });

  describe("redirects", () => {
    it("follows up to maxRedirects, re-resolving each hop", T, async () => {
      const result = await fetchReference(`${base}/hop/3`, options({ maxRedirects: 3 }));
      assert.ok(result.ok, result.ok ? "" : result.message);
      assert.equal(result.bytes.toString(), "arrived");
      assert.equal(result.finalUrl, `${base}/hop/0`);
    });

    it("fails when more redirects are needed than allowed", T, async () => {
      const result = await fetchReference(`${base}/hop/3`, options({ maxRedirects: 2 }));
      assertFailure(result, "http_status", /hop\/1 answered 307 Temporary Redirect, a redirect beyond the limit of 2/);
      const none = await fetchReference(`${base}/hop/1`, options({ maxRedirects: 0 }));
      assertFailure(none, "http_status", /beyond the limit of 0/);
    });

    it("refuses a redirect to a non-http scheme", T, async () => {
      const result = await fetchReference(`${base}/redirect?to=${encodeURIComponent("file:///etc/passwd")}`, options());
      assertFailure(result, "bad_url", /redirected to file:\/\/\/etc\/passwd, which cannot be fetched: it uses the file: scheme/);
    });

    // The servers can only live on loopback, so these use a guard that lets exactly 127.0.0.1
    // through and is otherwise the standard one: the first hop connects, the redirect must not.
    const loopbackOnly = (address: string): string | null => (address === "127.0.0.1" ? null : describeForbiddenAddress(address));

    it("checks every redirect hop against the guard: literal targets", T, async () => {
      for (const target of ["http://169.254.169.254/latest/meta-data/", "http://10.0.0.5/admin", "http://[::ffff:a9fe:a9fe]/"]) {
        const before = connectAttempts.length;
        const result = await fetchReferenceWithGuard(`${base}/redirect?to=${encodeURIComponent(target)}`, options(), loopbackOnly);
        assertFailure(result, "forbidden_target", /^Refusing to follow the redirect from http:\/\/127\.0\.0\.1:\d+\/redirect to /);
        assert.deepEqual(connectAttempts.slice(before), ["127.0.0.1"], "only the first hop connects");
      }
    });

    it("checks every redirect hop against the guard: names resolving to private addresses", T, async () => {
      const lookup = tableLookup({ "docs.example.test": ["127.0.0.1"], "internal.example.test": ["192.168.0.10"] });
      const before = connectAttempts.length;
      const result = await fetchReferenceWithGuard(
        `http://docs.example.test:${port}/redirect?to=${encodeURIComponent("http://internal.example.test/secret.pdf")}`,
        options({ lookup }),
        loopbackOnly,
      );
      const message = assertFailure(result, "forbidden_target");
      assert.equal(
        message,
        `Refusing to follow the redirect from http://docs.example.test:${port}/redirect to http://internal.example.test/secret.pdf: ` +
          "internal.example.test resolves to an address that documents may not be fetched from (set documents.fetchAllowPrivateTargets to allow it)",
      );
      assert.deepEqual(lookup.calls, ["docs.example.test", "internal.example.test"]);
      assert.deepEqual(connectAttempts.slice(before), ["docs.example.test"]);
    });

    it("checks redirects to localhost", T, async () => {
      const result = await fetchReferenceWithGuard(
        `${base}/redirect?to=${encodeURIComponent(`http://localhost:${port}/doc.pdf`)}`,
        options(),
        (address) => (address === "127.0.0.1" ? null : describeForbiddenAddress(address)),
      );
      assertFailure(result, "forbidden_target", /localhost names this machine/);
    });
  });

  describe("size limit", () => {
    it("fails fast from Content-Length", T, async () => {
      const started = Date.now();
      const result = await fetchReference(`${base}/big-declared`, options({ maxBytes: 1_000_000, timeoutMs: 5000 }));
      assertFailure(result, "too_large", /is 10000000 bytes, more than the limit of 1000000 bytes/);
      assert.ok(Date.now() - started < 2000, "without waiting for the body");
    });

    it("stops a chunked body without length as soon as it passes the limit", T, async () => {
      const result = await fetchReference(`${base}/big-stream`, options({ maxBytes: 100_000, timeoutMs: 5000 }));
      assertFailure(result, "too_large", /is larger than the limit of 100000 bytes/);
      await streamClosed; // the server's endless stream ends only because the client hung up
      assert.ok(streamedBytes < 20_000_000, `server wrote ${streamedBytes} bytes`);
    });
  });

  describe("timeouts and network failures", () => {
    it("times out when the server never answers", T, async () => {
      const started = Date.now();
      const result = await fetchReference(`${base}/hang`, options({ timeoutMs: 200 }));
      assertFailure(result, "timeout", /took longer than 200 ms/);
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 190 && elapsed < 1500, `took ${elapsed} ms`);
    });

    it("times out when the body stalls", T, async () => {
      const result = await fetchReference(`${base}/slow-body`, options({ timeoutMs: 200 }));
      assertFailure(result, "timeout");
    });

    it("times out when name resolution hangs", T, async () => {
      const lookup = async (): Promise<{ address: string; family: 4 | 6 }[]> => new Promise(() => {});
      const result = await fetchReference("http://slow-dns.example.test/doc.pdf", options({ timeoutMs: 100, lookup }));
      assertFailure(result, "timeout");
    });

    it("reports a connection closed mid-body", T, async () => {
      const result = await fetchReference(`${base}/cut`, options());
      assertFailure(result, "network", /closed after 10 bytes/);
    });

    it("reports a refused connection", T, async () => {
      const closed = await listen("127.0.0.1");
      const closedPort = (closed.address() as AddressInfo).port;
      await closeServer(closed);
      const result = await fetchReference(`http://127.0.0.1:${closedPort}/doc.pdf`, options());
      assertFailure(result, "network", /refused the connection/);
    });

    it("reports a TLS failure on the https path (pinned lookup, plain-HTTP server)", T, async () => {
      const lookup = tableLookup({ "docs.example.test": ["127.0.0.1"] });
      const result = await fetchReference(`https://docs.example.test:${port}/doc.pdf`, options({ lookup }));
      assertFailure(result, "network", /^Could not fetch https:\/\/docs\.example\.test:\d+\/doc\.pdf: /);
      assert.deepEqual(lookup.calls, ["docs.example.test"]);
    });

    it("returns, rather than throws, when the request cannot even be built", T, async () => {
      const result = await fetchReference(`${base}/doc.pdf`, options({ userAgent: "bad\nagent" }));
      assertFailure(result, "network");
    });

    it("reports names that do not resolve", T, async () => {
      const result = await fetchReference("http://nowhere.example.test/doc.pdf", options({ lookup: tableLookup({}) }));
      assertFailure(result, "network", /nowhere\.example\.test does not exist in DNS/);
      const empty = await fetchReference("http://empty.example.test/doc.pdf", options({ lookup: tableLookup({ "empty.example.test": [] }) }));
      assertFailure(empty, "network", /has no addresses/);
    });
  });

  describe("status and URL errors", () => {
    it("reports a 404 without credentials or query string", T, async () => {
      const result = await fetchReference(`http://bob:hunter2@127.0.0.1:${port}/missing?token=abc`, options());
      const message = assertFailure(result, "http_status");
      assert.equal(message, `GET ${base}/missing answered 404 Not Found`);
    });

    it("refuses malformed URLs and other schemes", T, async () => {
      for (const url of ["not a url", "ftp://files.example.test/doc.pdf", "file:///etc/passwd", "javascript:alert(1)", ""]) {
        const result = await withoutConnecting(() => fetchReference(url, options()));
        assertFailure(result, "bad_url");
        const checked = checkReferenceUrl(url, true);
        assert.equal(checked.ok, false);
        if (!checked.ok) assert.equal(checked.kind, "bad_url");
      }
      const ftp = checkReferenceUrl("ftp://user:pw@files.example.test/doc.pdf", false);
      assert.ok(!ftp.ok);
      assert.equal(ftp.message, "Cannot fetch the document reference ftp://files.example.test/doc.pdf: it uses the ftp: scheme, and only http: and https: URLs can be fetched");
    });
  });
});

describe("isForbiddenAddress", () => {
  const table: [string, boolean][] = [
    // IPv4
    ["127.0.0.1", true],
    ["127.255.255.254", true],
    ["10.0.0.5", true],
    ["172.16.0.1", true],
    ["172.31.255.255", true],
    ["172.32.0.1", false],
    ["192.168.1.1", true],
    ["169.254.169.254", true],
    ["169.254.1.1", true],
    ["100.64.0.1", true],
    ["100.127.255.255", true],
    ["100.128.0.1", false],
    ["0.0.0.0", true],
    ["0.1.2.3", true],
    ["224.0.0.1", true],
    ["239.255.255.250", true],
    ["255.255.255.255", true],
    ["240.0.0.1", true],
    ["192.0.2.1", true],
    ["198.18.0.1", true],
    ["8.8.8.8", false],
    ["93.184.216.34", false],
    ["1.1.1.1", false],
    // IPv6
    ["::1", true],
    ["[::1]", true],
    ["::", true],
    ["fc00::1", true],
    ["fd12:3456:789a::1", true],
    ["fe80::1", true],
    ["fe80::1%eth0", true],
    ["febf::1", true],
    ["ff02::1", true],
    ["2001:db8::1", true],
    ["2001:4860::1", false],
    ["2001:4860:4860::8888", false],
    ["2606:4700:4700::1111", false],
    // IPv4 carried in IPv6
    ["::ffff:127.0.0.1", true],
    ["::ffff:7f00:1", true],
    ["::FFFF:7F00:0001", true],
    ["::ffff:10.0.0.1", true],
    ["::ffff:169.254.169.254", true],
    ["::ffff:a9fe:a9fe", true],
    ["::ffff:0.0.0.0", true],
    ["::ffff:8.8.8.8", false],
    ["0:0:0:0:0:ffff:808:808", false],
    ["64:ff9b::7f00:1", true],
    ["64:ff9b::8.8.8.8", false],
    ["2002:7f00:1::", true],
    ["2002:808:808::1", false],
    ["::127.0.0.1", true],
    // not addresses at all
    ["localhost", true],
    ["", true],
    ["999.1.1.1", true],
  ];
  for (const [address, forbidden] of table) {
    it(`${address || "(empty)"} is ${forbidden ? "forbidden" : "allowed"}`, () => {
      assert.equal(isForbiddenAddress(address), forbidden);
    });
  }

  it("explains IPv4-mapped forms by the address they carry", () => {
    assert.equal(describeForbiddenAddress("::ffff:7f00:1"), "an IPv4-mapped address for 127.0.0.1, which is a loopback address");
  });
});
