/**
 * Test support: a real headless Chromium (Debian's `chromium` package, installed by
 * scripts/install.sh) driven with playwright-core, and axe-core's accessibility check run
 * inside the page.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { chromium, type Browser, type Page } from "playwright-core";

const CANDIDATES = [process.env.FAXLINE_TEST_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].filter(Boolean) as string[];

export function chromiumPath(): string {
  const found = CANDIDATES.find((p) => existsSync(p));
  if (!found) throw new Error(`No Chromium found (looked at ${CANDIDATES.join(", ")}); scripts/install.sh installs Debian's chromium package`);
  return found;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // --no-sandbox: the tests run as root in CI, where Chromium's sandbox cannot start.
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--lang=en-GB"],
  });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** Runs axe-core (WCAG 2.0/2.1 A and AA rules) on the page; returns the violations. */
export async function accessibilityViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown, o: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) }));
  });
}

export function describeViolations(violations: AxeViolation[]): string {
  return violations.map((v) => `${v.id} (${v.impact}): ${v.help}\n  ${v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary ?? ""}`).join("\n  ")}`).join("\n");
}

/**
 * The words inside `selector`'s elements that the page lays out across two lines (a header
 * shown as "CO" over "UNT", a number split after three digits), as "text of the element: word".
 * A word is a run of non-space characters; it is broken when its characters' boxes lie on more
 * than one line.
 */
export async function wordsBrokenAcrossLines(page: Page, selector: string): Promise<string[]> {
  return page.evaluate((sel) => {
    const doc = (globalThis as unknown as { document: any }).document;
    const broken: string[] = [];
    for (const element of doc.querySelectorAll(sel)) {
      const walker = doc.createTreeWalker(element, 4 /* NodeFilter.SHOW_TEXT */);
      for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
        const text: string = node.textContent ?? "";
        for (const match of text.matchAll(/\S+/g)) {
          const range = doc.createRange();
          range.setStart(node, match.index);
          range.setEnd(node, match.index + match[0].length);
          const tops = new Set<number>();
          for (const rect of range.getClientRects()) if (rect.width > 0) tops.add(Math.round(rect.top));
          if (tops.size > 1) broken.push(`${(element.textContent ?? "").trim()}: ${match[0]}`);
        }
      }
    }
    return broken;
  }, selector);
}
