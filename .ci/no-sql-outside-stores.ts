/**
 * SQL lives in repositories (issue 22): a `*-store.ts` file owns every statement of its aggregate's tables, the
 * platform's database layer (services/platform/database/) owns the statements about the database itself
 * (partitions, session bounds, prepared-statement plumbing), and migrations own the schema. Anywhere else, a
 * string or template literal that reads as SQL fails `npm run lint:architecture`.
 *
 * Literals, not lines: swc parses each file (the parser dependency-cruiser already uses), so prose in comments
 * ("select a plan from the list") and HTML (`<select>`) never count. `node .ci/no-sql-outside-stores.ts FILE…`
 * checks the named files only (the planted-violation test uses it).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { parseSync } from "@swc/core";

const root = join(import.meta.dirname, "..");
const roots = ["cli", "gateway", "services", "workers"];

/** Where SQL may be written. */
export function mayHoldSql(path: string): boolean {
  return /-store\.ts$/.test(path) || path.startsWith("services/platform/database/") || /(^|\/)migrations\//.test(path);
}

/** Statements, not words: each pattern needs the shape of a clause. */
const SQL = [
  // `?` stands for an interpolated name (`from ${table}`): the template's expressions are joined as ` ? `.
  /\bselect\b[\s\S]*?\bfrom\s+[a-z_"(?]/i,
  /\binsert\s+into\s+[a-z_"?]/i,
  /\bupdate\s+([a-z_"]+|\?)(\s+[a-z_]+)?\s+set\b/i,
  /\bdelete\s+from\s+[a-z_"?]/i,
  /\b(alter|create|drop|truncate)\s+(table|index|function|trigger)\b/i,
  /\bpg_(try_)?advisory_(xact_)?lock\b/i,
  /\bon\s+conflict\b/i,
];

export function sqlLiterals(source: string, path: string): { line: number; text: string }[] {
  const module = parseSync(source, { syntax: "typescript", target: "es2024", comments: false });
  const found: { offset: number; text: string }[] = [];
  const visit = (node: unknown): void => {
    if (!node || typeof node !== "object") return;
    if (Array.isArray(node)) {
      for (const child of node) visit(child);
      return;
    }
    const n = node as { type?: string; value?: unknown; quasis?: { cooked?: string; raw?: string }[]; span?: { start: number } };
    let text: string | undefined;
    if (n.type === "StringLiteral" && typeof n.value === "string") text = n.value;
    if (n.type === "TemplateLiteral" && n.quasis) text = n.quasis.map((q) => q.raw ?? q.cooked ?? "").join(" ? ");
    if (text !== undefined && SQL.some((re) => re.test(text))) found.push({ offset: n.span?.start ?? 0, text });
    // An entity's `.formula(…)` is part of its mapping (the ORM embeds it in its own selects), not a statement.
    if (n.type === "CallExpression" && isFormulaCall(n)) return;
    for (const value of Object.values(n)) if (value && typeof value === "object") visit(value);
  };
  visit(module.body);
  // swc spans count from a global offset shared by every parse: make them relative to this module.
  const base = (module as unknown as { span: { start: number } }).span.start;
  return found.map(({ offset, text }) => ({ line: source.slice(0, Math.max(0, offset - base)).split("\n").length, text }));
  void path;
}

function isFormulaCall(call: unknown): boolean {
  const callee = (call as { callee?: { type?: string; property?: { type?: string; value?: string } } }).callee;
  return callee?.type === "MemberExpression" && callee.property?.type === "Identifier" && callee.property.value === "formula";
}

function* typescriptFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) yield* typescriptFiles(full);
    else if (name.endsWith(".ts")) yield full;
  }
}

const named = process.argv.slice(2);
const files = named.length ? named.map((f) => join(process.cwd(), f)) : roots.flatMap((r) => [...typescriptFiles(join(root, r))]);
let failures = 0;
for (const file of files) {
  const path = relative(root, file);
  if (mayHoldSql(path)) continue;
  for (const { line, text } of sqlLiterals(readFileSync(file, "utf8"), path)) {
    failures++;
    console.log(`${path}:${line}: SQL outside a repository: ${text.replace(/\s+/g, " ").trim().slice(0, 100)}`);
  }
}
if (failures) {
  console.log(`\n${failures} SQL literal(s) outside a repository (*-store.ts), services/platform/database/ or migrations (above)`);
  process.exit(1);
}
