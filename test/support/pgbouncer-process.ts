import { eventually } from "./eventually.ts";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { freePort } from "./redis-process.ts";

const run = promisify(execFile);

/**
 * A private PgBouncer (Debian's pgbouncer) on a free port in front of a
 * PostgreSQL server, in a temp dir. Never a shared pooler. PgBouncer refuses
 * to run as root: as root it runs as the `postgres` user.
 */
export interface PgBouncerProcess {
  port: number;
  /** URL of `database` through the pooler. */
  url(database: string): string;
  /** The pooler's log so far (for a failing test's message). */
  log(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** The server behind it: host and port of this URL (its user is the one clients use). */
  serverUrl: string;
  poolMode?: "session" | "transaction" | "statement";
  /** Server connections per database/user pair. */
  poolSize?: number;
  /** More `[pgbouncer]` settings, written as given. */
  settings?: Record<string, string | number>;
}

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncerProcess> {
  const server = new URL(options.serverUrl);
  const user = decodeURIComponent(server.username || "postgres");
  const dir = mkdtempSync(join(tmpdir(), "billing-pgbouncer-"));
  const port = await freePort();
  const settings: Record<string, string | number> = {
    listen_addr: "127.0.0.1",
    listen_port: port,
    unix_socket_dir: "",
    // The shared test server trusts local connections; the pooler only needs to know the user.
    auth_type: "trust",
    auth_file: join(dir, "userlist.txt"),
    pool_mode: options.poolMode ?? "transaction",
    default_pool_size: options.poolSize ?? 10,
    max_client_conn: 500,
    logfile: join(dir, "pgbouncer.log"),
    pidfile: join(dir, "pgbouncer.pid"),
    admin_users: user,
    ...options.settings,
  };
  writeFileSync(
    join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      // Any database name goes to the database of that name on the server.
      `* = host=${server.hostname} port=${server.port || 5432}`,
      "[pgbouncer]",
      ...Object.entries(settings).map(([k, v]) => `${k} = ${v}`),
      "",
    ].join("\n"),
  );
  writeFileSync(join(dir, "userlist.txt"), `"${user}" ""\n`);
  const ids = await postgresIds();
  if (ids) for (const f of ["", "pgbouncer.ini", "userlist.txt"]) chownSync(join(dir, f), ids.uid, ids.gid);

  let child: ChildProcess | undefined = spawn("pgbouncer", [join(dir, "pgbouncer.ini")], {
    stdio: "ignore",
    ...(ids ? { uid: ids.uid, gid: ids.gid } : {}),
  });
  const exited = new Promise<void>((resolve) => child!.once("exit", () => resolve()));
  const log = () => {
    try {
      return readFileSync(join(dir, "pgbouncer.log"), "utf8");
    } catch {
      return "";
    }
  };
  const stop = async () => {
    const c = child;
    child = undefined;
    if (c && c.exitCode === null && c.signalCode === null) {
      c.kill("SIGKILL");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const url = (database: string) => {
    const u = new URL(options.serverUrl);
    u.port = String(port);
    u.hostname = "127.0.0.1";
    u.pathname = `/${database}`;
    return u.toString();
  };
  try {
    await eventually(
      async () => {
        if (child!.exitCode !== null) throw new Error(`pgbouncer exited: ${log()}`);
        const client = new pg.Client({ connectionString: url("pgbouncer"), connectionTimeoutMillis: 1_000 });
        client.on("error", () => {});
        const up = await client.connect().then(
          () =>
            client.query("show version").then(
              () => true,
              () => true,
            ),
          () => false,
        );
        await client.end().catch(() => {});
        return up;
      },
      10_000,
      () => `pgbouncer to start: ${log()}`,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, url, log, stop };
}

async function postgresIds(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  return {
    uid: Number((await run("id", ["-u", "postgres"])).stdout.trim()),
    gid: Number((await run("id", ["-g", "postgres"])).stdout.trim()),
  };
}
