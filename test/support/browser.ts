import { createRequire } from "node:module";
import type { Page } from "playwright-core";

/** Flags for Debian's Chromium in CI containers (headless, no sandbox, nothing phoning home). */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/** The two widths every hosted page is checked at: a desktop and a phone. */
export const VIEWPORTS = [
  { name: "desktop", viewport: { width: 1280, height: 800 }, isMobile: false },
  { name: "phone (390 px)", viewport: { width: 390, height: 844 }, isMobile: true },
] as const;

const AXE = createRequire(import.meta.url).resolve("axe-core");

/**
 * axe-core's serious and critical violations on what `page` shows now, as
 * "rule: help (where)" lines. axe is a script and the pages allow none (CSP,
 * and the tests browse with JavaScript off), so the page's HTML is checked in
 * a scratch context of the same width with scripts on and CSP bypassed; the
 * pages run no script, so the document is the same.
 */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  const html = await page.content();
  const scratch = await page.context().browser()!.newContext({ bypassCSP: true, viewport: page.viewportSize() });
  try {
    const copy = await scratch.newPage();
    await copy.setContent(html, { waitUntil: "load" });
    await copy.addScriptTag({ path: AXE });
    const violations = await copy.evaluate(async () => {
      const axe = (
        globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact?: string; help: string; nodes: { target: string[] }[] }[] }> } }
      ).axe;
      return (await axe.run()).violations;
    });
    return violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  } finally {
    await scratch.close();
  }
}

/**
 * What does not fit the viewport's width: the document scrolling sideways, an
 * element reaching past either edge, or a box narrower than its content that
 * clips or scrolls it (scrollWidth > clientWidth). Visually hidden elements
 * (clip-path, e.g. a table head kept for screen readers) and form fields'
 * own text are left out.
 */
export async function overflowingElements(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    // Runs in the page (no DOM types in this project's TypeScript setup).
    const { document, getComputedStyle } = globalThis as any;
    const width: number = document.documentElement.clientWidth;
    const found: string[] = [];
    const name = (el: any) =>
      `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}${typeof el.className === "string" && el.className ? `.${el.className.trim().split(/\s+/).join(".")}` : ""}`;
    if (document.documentElement.scrollWidth > width) found.push(`the document is ${document.documentElement.scrollWidth} px wide in a ${width} px viewport`);
    const hidden = (el: any): boolean => !!el && (getComputedStyle(el).clipPath !== "none" || hidden(el.parentElement));
    for (const el of document.querySelectorAll("body *")) {
      if (["INPUT", "SELECT", "TEXTAREA", "OPTION"].includes(el.tagName) || hidden(el)) continue;
      const box = el.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      if (box.left < -0.5 || box.right > width + 0.5) found.push(`${name(el)} spans ${Math.round(box.left)}–${Math.round(box.right)} px`);
      if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== "visible") {
        found.push(`${name(el)} cuts its content: ${el.scrollWidth} px in ${el.clientWidth} px`);
      }
    }
    return found;
  });
}
