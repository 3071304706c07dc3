/**
 * URLs as they may appear in logs, errors and API answers: never with user info (credentials
 * may ride in a URL), and in messages without query or fragment either.
 */

/** Scheme, host, port and path: what messages show. */
export function displayUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** The whole URL minus user info and fragment. */
export function withoutCredentials(url: URL): string {
  const copy = new URL(url.href);
  copy.username = "";
  copy.password = "";
  copy.hash = "";
  return copy.href;
}

/** A stored URL as a person may see it (user info removed); text that is no URL as it is; null stays null. */
export function shownUrl(text: string | null): string | null {
  if (text === null) return null;
  try {
    return withoutCredentials(new URL(text));
  } catch {
    return text;
  }
}
