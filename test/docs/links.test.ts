import { expect } from "chai";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Every relative markdown link in README.md, CHANGELOG.md and docs/*.md points at a file that exists, and every
 * `#anchor` at a heading of its target file (GitHub's slugs: lower case, spaces to '-', punctuation but '-' and
 * '_' dropped, repeated headings numbered -1, -2, …). */
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const files = [
  "README.md",
  "CHANGELOG.md",
  ...readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

function withoutCode(text: string): string[] {
  let fenced = false;
  return text.split("\n").map((line) => {
    if (/^```/.test(line)) {
      fenced = !fenced;
      return "";
    }
    return fenced ? "" : line.replace(/`[^`]*`/g, "");
  });
}

export function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(path: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (/^```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    const m = fenced ? null : /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1] ?? "");
    const n = seen.get(base);
    seen.set(base, n === undefined ? 0 : n + 1);
    anchors.add(n === undefined ? base : `${base}-${n + 1}`);
  }
  return anchors;
}

export function brokenLinks(): string[] {
  const broken: string[] = [];
  for (const file of files) {
    const lines = withoutCode(readFileSync(join(root, file), "utf8"));
    lines.forEach((line, i) => {
      for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1] ?? "";
        if (/^[a-z]+:/i.test(target)) continue;
        const [path = "", anchor] = target.split("#");
        const resolved = path === "" ? join(root, file) : resolve(dirname(join(root, file)), path);
        if (!existsSync(resolved)) {
          broken.push(`${file}:${i + 1} ${target}: no such file`);
          continue;
        }
        if (anchor !== undefined && resolved.endsWith(".md") && !anchorsOf(resolved).has(anchor)) {
          broken.push(`${file}:${i + 1} ${target}: no such heading`);
        }
      }
    });
  }
  return broken;
}

describe("documentation links", () => {
  it("point at files and headings that exist", () => {
    expect(brokenLinks()).to.deep.equal([]);
  });

  it("slug headings as GitHub does", () => {
    expect(slug("Dunning settings: `GET/PATCH /api/v1/settings/billing`")).to.equal("dunning-settings-getpatch-apiv1settingsbilling");
    expect(slug("Database failover (Patroni)")).to.equal("database-failover-patroni");
  });
});
