import { execFile } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./redis-process.ts";

const run = promisify(execFile);

/**
 * A private PostgreSQL cluster (initdb into a temp dir, a free port) that a
 * test may stop with `-m immediate` and start again. Never the shared server.
 * As root, the binaries run as the `postgres` user (initdb refuses root).
 */
export interface PostgresProcess {
  /** Server URL of the `postgres` database. */
  url: string;
  port: number;
  start(): Promise<void>;
  /** `pg_ctl stop -m immediate`: every backend dies at once, like a crash or failover. */
  stopImmediate(): Promise<void>;
  /** Stops the cluster and removes its directory. */
  destroy(): Promise<void>;
}

function binDir(): string {
  const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
  if (!versions.length) throw new Error("no PostgreSQL binaries under /usr/lib/postgresql");
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}

async function pgTool(tool: string, args: string[]): Promise<void> {
  const bin = join(binDir(), tool);
  if (process.getuid?.() === 0) await run("runuser", ["-u", "postgres", "--", bin, ...args]);
  else await run(bin, args);
}

export async function startPostgresProcess(options: { maxConnections?: number } = {}): Promise<PostgresProcess> {
  const dir = mkdtempSync(join(tmpdir(), "billing-pg-"));
  const data = join(dir, "data");
  if (process.getuid?.() === 0) {
    chmodSync(dir, 0o700);
    chownSync(dir, Number((await run("id", ["-u", "postgres"])).stdout.trim()), Number((await run("id", ["-g", "postgres"])).stdout.trim()));
  }
  await pgTool("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"]);
  const port = await freePort();
  const opts = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    `-c max_connections=${options.maxConnections ?? 100}`,
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
    "-c shared_buffers=32MB",
  ].join(" ");
  const proc: PostgresProcess = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: () => pgTool("pg_ctl", ["-D", data, "-o", opts, "-l", join(dir, "log"), "-w", "-t", "30", "start"]),
    stopImmediate: () => pgTool("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]),
    async destroy() {
      await pgTool("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await proc.start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return proc;
}
