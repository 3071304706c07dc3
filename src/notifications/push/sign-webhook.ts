/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the receiver can check that
 * a push comes from Faxline and was not replayed.
 *
 *   webhook-id:        the notification id (stable over retries, for de-duplication)
 *   webhook-timestamp: seconds since the epoch when this try was sent
 *   webhook-signature: "v1,<base64 HMAC-SHA256(key, `${id}.${timestamp}.${body}`)>", one per
 *                      active secret, separated by spaces
 *
 * Secrets are `whsec_` + base64 of 32 random bytes; the HMAC key is the decoded bytes. An
 * account holds at most two: after a rotation both sign, so receivers can switch over without
 * losing a push; the older one is dropped at the next rotation.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const PREFIX = "whsec_";

export function newSigningSecret(): string {
  return `${PREFIX}${randomBytes(32).toString("base64")}`;
}

export function isSigningSecret(text: string): boolean {
  if (!text.startsWith(PREFIX)) return false;
  const key = Buffer.from(text.slice(PREFIX.length), "base64");
  return key.length >= 24 && key.toString("base64") === text.slice(PREFIX.length);
}

function hmac(secret: string, id: string, timestamp: number, body: string | Buffer): string {
  const key = Buffer.from(secret.slice(PREFIX.length), "base64");
  return createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest("base64");
}

/** The three headers for one try; `secrets` newest first, at least one. */
export function signWebhook(secrets: readonly string[], id: string, timestampSecs: number, body: string | Buffer): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSecs),
    "webhook-signature": secrets.map((s) => `v1,${hmac(s, id, timestampSecs, body)}`).join(" "),
  };
}

/**
 * The receiver's check, as documented in docs/notifications.md: true when one of the
 * signatures matches `secret` and the timestamp lies within `toleranceSecs` of `nowSecs`.
 */
export function verifyWebhook(
  secret: string,
  headers: { id: string; timestamp: string; signature: string },
  body: string | Buffer,
  nowSecs: number,
  toleranceSecs = 300,
): boolean {
  const timestamp = Number(headers.timestamp);
  if (!Number.isInteger(timestamp) || Math.abs(nowSecs - timestamp) > toleranceSecs) return false;
  const expected = Buffer.from(hmac(secret, headers.id, timestamp, body));
  return headers.signature.split(" ").some((part) => {
    const [version, signature] = part.split(",", 2);
    if (version !== "v1" || signature === undefined) return false;
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
