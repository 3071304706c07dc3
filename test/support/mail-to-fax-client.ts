/**
 * Test support for mail-to-fax: a throw-away certificate for the listener's STARTTLS (openssl),
 * a small PDF, and a sending server (Nodemailer with STARTTLS required) that reports the
 * listener's final answer or its refusal with code, text and the command refused.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import nodemailer, { type SendMailOptions } from "nodemailer";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { requirePeer } from "./required-peers.ts";

/** A throw-away certificate for localhost, made by openssl in `dir`. */
export function makeCertificate(dir: string): { key: string; cert: string } {
  requirePeer("openssl");
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  const made = spawnSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-keyout", key, "-out", cert],
    { encoding: "utf8" },
  );
  assert.equal(made.status, 0, made.stderr);
  return { key, cert };
}

export async function twoPagePdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const n of [1, 2]) doc.addPage([595, 842]).drawText(`Order page ${n}`, { x: 72, y: 760, size: 24, font });
  return Buffer.from(await doc.save());
}

interface SmtpOutcome {
  ok: boolean;
  responseCode: number | null;
  response: string;
  command: string | null;
}

/** Sends one mail over SMTP with STARTTLS required (from `localAddress`, if given); the server's final answer, or its refusal. */
export async function sendMail(port: number, ca: Buffer, mail: SendMailOptions, localAddress?: string): Promise<SmtpOutcome> {
  const transport = nodemailer.createTransport({ host: "127.0.0.1", port, ...(localAddress ? { localAddress } : {}), secure: false, requireTLS: true, tls: { ca, servername: "localhost" }, connectionTimeout: 10_000, socketTimeout: 60_000 });
  try {
    const info = await transport.sendMail(mail);
    return { ok: true, responseCode: 250, response: info.response, command: null };
  } catch (error) {
    const e = error as { responseCode?: number; response?: string; command?: string; message: string };
    return { ok: false, responseCode: e.responseCode ?? null, response: e.response ?? e.message, command: e.command ?? null };
  } finally {
    transport.close();
  }
}

