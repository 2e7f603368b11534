import { eventually } from "./eventually.ts";
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { freePort } from "./redis-process.ts";

/** What /api/v1/query answers (status success or error). */
export interface QueryAnswer {
  status: "success" | "error";
  error?: string;
  data?: { resultType: string; result: { metric: Record<string, string>; value?: [number, string] }[] };
}

/**
 * A private Prometheus (Debian's `prometheus` binary) on a free port, with its
 * own config and TSDB in a temp dir: scrapes the given targets every second
 * and evaluates the given rule files. Never a shared server; stop() kills only
 * this child.
 */
export interface PrometheusServer {
  url: string;
  query(expr: string): Promise<QueryAnswer>;
  /** The label sets of every series that `match` selects (/api/v1/series). */
  series(match: string): Promise<Record<string, string>[]>;
  /** GET an /api/v1 path and return its `data`. */
  api<T = unknown>(path: string): Promise<T>;
  /** Prometheus' own output so far (for a failing test's message). */
  log(): string;
  stop(): Promise<void>;
}

export interface PrometheusOptions {
  /** Scrape job name -> host:port targets serving /metrics. */
  jobs: Record<string, string[]>;
  /** Rule files copied into the config dir and loaded. */
  ruleFiles?: string[];
}

export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusServer> {
  const dir = mkdtempSync(join(tmpdir(), "billing-prometheus-"));
  const port = await freePort();
  const rules = (options.ruleFiles ?? []).map((file, i) => {
    const name = `rules-${i}.yml`;
    copyFileSync(file, join(dir, name));
    return name;
  });
  writeFileSync(
    join(dir, "prometheus.yml"),
    stringify({
      global: { scrape_interval: "1s", scrape_timeout: "1s", evaluation_interval: "1s" },
      rule_files: rules,
      scrape_configs: Object.entries(options.jobs).map(([job_name, targets]) => ({ job_name, static_configs: [{ targets }] })),
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  let output = "";
  let child: ChildProcess | undefined = spawn(
    "prometheus",
    [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout!.on("data", (c: Buffer) => (output += c));
  child.stderr!.on("data", (c: Buffer) => (output += c));
  const exited = new Promise<void>((resolve) => child!.once("exit", () => resolve()));
  let spawnFailed: Error | undefined;
  child.once("error", (err) => (spawnFailed = err));

  const stop = async () => {
    const c = child;
    child = undefined;
    if (c && c.exitCode === null && c.signalCode === null) {
      c.kill("SIGKILL");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}/api/v1/${path}`, { signal: AbortSignal.timeout(5_000) });
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== "success") throw new Error(`prometheus ${path}: ${body.error}`);
    return body.data;
  };
  try {
    await eventually(
      async () => {
        if (spawnFailed) throw spawnFailed;
        if (child!.exitCode !== null) throw new Error(`prometheus exited: ${output}`);
        return fetch(`${url}/-/ready`).then(
          (r) => r.status === 200,
          () => false,
        );
      },
      20_000,
      () => `prometheus to start: ${output}`,
      100,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    async query(expr) {
      const res = await fetch(`${url}/api/v1/query`, { method: "POST", body: new URLSearchParams({ query: expr }), signal: AbortSignal.timeout(5_000) });
      return (await res.json()) as QueryAnswer;
    },
    series: (match) => api<Record<string, string>[]>(`series?${new URLSearchParams({ "match[]": match })}`),
    api,
    log: () => output,
    stop,
  };
}
