/**
 * The deployed shape for the bench (issue 27): every role its own process,
 * started as the npm scripts start them (`start:gateway`, `start:services`,
 * `start:workers` with WORKER_GROUPS), on a database of its own and a queue
 * prefix of its own on the shared Redis. Settings are the defaults but for
 * what a bench on loopback needs (a private webhook destination, the
 * sandbox for the admin seeding, a rate limit that lets the seeding through).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { Redis } from "ioredis";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { infrastructure } from "../support/infrastructure.ts";
import { freePort } from "../support/redis-process.ts";
import { apiClient, type ApiClient } from "../support/http.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/**
 * `node` arguments of a role exactly as `npm start` runs it (the flags and entry of package.json's "start" script,
 * "start all" without its role): one source, so a bench never runs flags an SRE does not.
 */
export const NODE_ARGS: readonly string[] = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts.start as string)
  .split(/\s+/)
  .slice(1, -1);
const ADMIN_KEY = "bench-admin-key-0123456789";

export type Role = "gateway" | "services" | "workers" | "all";

/** Every role process this bench started and has not seen exit. */
const live = new Set<ChildProcess>();
let endingOnSignal = false;
/**
 * A bench told to stop (Ctrl-C, `kill`, a `timeout`) takes its role processes with it: they are children, not in its
 * process group once a supervisor signals the bench alone, and a `finally` never runs on a signal. Installed with the
 * first role.
 */
function endRolesOnSignal(): void {
  if (endingOnSignal) return;
  endingOnSignal = true;
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      for (const child of live) child.kill("SIGTERM");
      process.exit(128 + ({ SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const)[signal]);
    });
  }
}

export interface RoleProcess {
  name: string;
  child: ChildProcess;
  /** Its operations port (/readyz, /metrics). */
  opsPort: number;
  /** When it was spawned (Date.now()). */
  spawnedAt: number;
  stop(): Promise<void>;
}

export class SplitSystem {
  db!: TestDatabase;
  env!: NodeJS.ProcessEnv;
  gatewayPort = 0;
  servicesPort = 0;
  baseUrl = "";
  admin!: ApiClient;
  sqlPool!: pg.Pool;
  private readonly roles: RoleProcess[] = [];

  async start(extraEnv: Record<string, string> = {}): Promise<void> {
    const { redisUrl } = await infrastructure();
    this.db = await createTestDatabase();
    this.gatewayPort = await freePort();
    this.servicesPort = await freePort();
    this.baseUrl = `http://127.0.0.1:${this.gatewayPort}`;
    this.env = {
      ...process.env,
      NODE_ENV: "development",
      SANDBOX: "true",
      DATABASE_URL: this.db.url,
      REDIS_URL: redisUrl,
      ADMIN_API_KEY: ADMIN_KEY,
      PORT: String(this.gatewayPort),
      SERVICES_PORT: String(this.servicesPort),
      PUBLIC_BASE_URL: this.baseUrl,
      QUEUE_PREFIX: `bench-${randomBytes(4).toString("hex")}`,
      LOG_LEVEL: "warn",
      RATE_LIMIT_BURST: "100000",
      RATE_LIMIT_PER_SECOND: "100000",
      WEBHOOK_ALLOW_PRIVATE: "true",
      ...extraEnv,
    };
    for (const key of ["TEST_DATABASE_URL", "TEST_REDIS_URL", "BENCH_PROFILE"]) delete this.env[key];
    this.admin = apiClient(this.baseUrl, { "x-admin-key": ADMIN_KEY });
    this.sqlPool = new pg.Pool({ connectionString: this.db.url, max: 2 });
  }

  /** Spawns a role and waits until its /readyz answers 200. `profileDir`: a CPU profile of the process (--cpu-prof). */
  async spawnRole(name: string, role: Role, env: Record<string, string> = {}, profileDir?: string): Promise<RoleProcess> {
    const opsPort = await freePort();
    const args = [...(profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`] : []), ...NODE_ARGS, role];
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...this.env, METRICS_PORT: String(opsPort), ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    endRolesOnSignal();
    live.add(child);
    child.once("exit", () => live.delete(child));
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    const spawnedAt = Date.now();
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const proc: RoleProcess = {
      name,
      child,
      opsPort,
      spawnedAt,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
        await Promise.race([exited, sleep(15_000).then(() => child.kill("SIGKILL"))]);
      },
    };
    this.roles.push(proc);
    for (const deadline = Date.now() + 120_000; ; await sleep(50)) {
      if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${stderr}`);
      const ok = await fetch(`http://127.0.0.1:${opsPort}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return proc;
      if (Date.now() > deadline) throw new Error(`${name} not ready after 120 s: ${stderr}`);
    }
  }

  async sql<T>(text: string, params: unknown[] = []): Promise<T[]> {
    return (await this.sqlPool.query(text, params)).rows as T[];
  }

  /** A merchant and its API client (admin API). */
  async createMerchant(name: string): Promise<{ id: string; apiKey: string; api: ApiClient }> {
    const res = await this.admin.post("/admin/v1/merchants", { name });
    if (res.status !== 201) throw new Error(`merchant create failed: ${res.status} ${res.text}`);
    return { id: res.body.id, apiKey: res.body.apiKey, api: apiClient(this.baseUrl, { "x-api-key": res.body.apiKey }) };
  }

  async close(): Promise<void> {
    for (const r of this.roles.reverse()) await r.stop().catch(() => {});
    await this.sqlPool?.end().catch(() => {});
    await this.dropQueueKeys().catch(() => {});
    // BENCH_KEEP_DB=1 keeps the database for a look afterwards (e.g. webhook_delivery_attempts' claim times and durations).
    if (process.env.BENCH_KEEP_DB) process.stderr.write(`[bench] kept database ${this.db?.name}\n`);
    else await this.db?.drop().catch(() => {});
  }

  /** Its own BullMQ keys on the shared Redis (QUEUE_PREFIX, kept cluster-safe as `{prefix}`): the sweeps' schedulers would stay behind. */
  private async dropQueueKeys(): Promise<void> {
    if (!this.env?.QUEUE_PREFIX || !this.env.REDIS_URL) return;
    const redis = new Redis(this.env.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      for (const pattern of [`{${this.env.QUEUE_PREFIX}}*`, `${this.env.QUEUE_PREFIX}:*`]) {
        let cursor = "0";
        do {
          const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 500);
          cursor = next;
          if (keys.length > 0) await redis.unlink(...keys);
        } while (cursor !== "0");
      }
    } finally {
      redis.disconnect();
    }
  }
}

export const repoPath = (...p: string[]) => path.join(ROOT, ...p);
