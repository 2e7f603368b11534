import { allRoutes } from "../../gateway/routes/index.ts";
import { buildOpenApiDocument } from "../../gateway/openapi/document.ts";

/**
 * Every REST answer the suite sees through the test HTTP client (method, path,
 * status). After all files, each answer of a documented operation must be a
 * status its OpenAPI entry lists: the document cannot drift from the code.
 */
const seen = new Map<string, { method: string; path: string; status: number }>();

export function recordAnswer(method: string, url: string, status: number): void {
  const path = new URL(url).pathname;
  seen.set(`${method} ${path} ${status}`, { method: method.toLowerCase(), path, status });
}

export function undocumentedAnswers(): string[] {
  const doc = buildOpenApiDocument(allRoutes, "/") as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
  const operations = Object.entries(doc.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method,
      template,
      pattern: new RegExp(`^${template.replace(/\{\w+\}/g, "[^/]+")}$`),
      literal: !template.includes("{"),
      op,
    })),
  );
  const problems: string[] = [];
  for (const answer of seen.values()) {
    const candidates = operations.filter((o) => o.method === answer.method && o.pattern.test(answer.path));
    // A literal path wins over a template that also matches (by-external-id/… vs {id}).
    const match = candidates.find((o) => o.literal) ?? candidates.sort((a, b) => b.template.length - a.template.length)[0];
    if (!match) continue; // not a documented operation (unknown path, hosted pages, health)
    if (!(String(answer.status) in match.op.responses)) {
      problems.push(
        `${answer.method.toUpperCase()} ${match.template} answered ${answer.status} (e.g. ${answer.path}) but the document lists ${Object.keys(match.op.responses).join(", ")}`,
      );
    }
  }
  return problems;
}
