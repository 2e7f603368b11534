/**
 * The bare-code baselines of ../shared/bench (see its README), run as child
 * processes on this process's Node binary (the project's Node 24). Each prints
 * one JSON line on stdout; progress goes to stderr (shown only on failure).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** BENCH_BASELINES_DIR, else ../shared/bench next to the repository, else /work/shared/bench. */
export function baselinesDir(): string {
  const candidates = [process.env.BENCH_BASELINES_DIR, path.resolve(root, "../shared/bench"), path.resolve(root, "../../shared/bench"), "/work/shared/bench"];
  for (const c of candidates) if (c && existsSync(path.join(c, "run-all.mjs"))) return c;
  throw new Error("bench baselines not found: set BENCH_BASELINES_DIR to the shared bench kit (cd there && npm ci)");
}

/** The server part of DATABASE_URL: the baselines create and drop their own database there. */
export function benchPgUrl(databaseUrl: string): string {
  const u = new URL(databaseUrl);
  u.pathname = "/postgres";
  return u.toString();
}

export type BaselineName = "read" | "create" | "renewals" | "queue" | "webhooks";

export async function runBaseline(name: BaselineName, env: Record<string, string>): Promise<Record<string, number>> {
  const dir = baselinesDir();
  const child = spawn(process.execPath, [path.join(dir, `baseline-${name}.mjs`)], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  const line = out.trim().split("\n").at(-1) ?? "";
  if (code !== 0 || !line.startsWith("{")) throw new Error(`baseline ${name} failed (exit ${code}):\n${err.slice(-2000)}`);
  return JSON.parse(line) as Record<string, number>;
}
