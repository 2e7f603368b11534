/**
 * Bench figures in the deployed shape (issue 27): the roles as separate
 * processes (split-roles.ts), seeded through the public and admin APIs.
 */
import { spawn } from "node:child_process";
import { cpuSeconds, databaseCpuSeconds, residentMib } from "./proc-stats.ts";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { SplitSystem, type RoleProcess } from "./split-roles.ts";
import { randomUUID } from "node:crypto";
import { createLoad, readLoad, type ApiTarget, type FigureResult } from "./figures.ts";
import { createPlan, createWalletUser } from "../support/subscriptions.ts";
import type { TestSystem } from "../support/system.ts";
import { createOrm } from "../../services/platform/database/orm.ts";
import { entities } from "../../services/entities.ts";
import { recordEvent } from "../../services/events/record-event.ts";
import { systemClock } from "../../services/platform/clock.ts";

/**
 * B7 split: gateway, services and workers (scheduler, renewals, payments) up;
 * an endpoint created with the API's defaults (or `maxInFlight`); `events`
 * plan.created events committed (one plan through the API, the rest through
 * the outbox use case, recordEvent, with that plan's payload); then a
 * second workers process with WORKER_GROUPS=webhooks is started, and runs
 * until the sink has every event. deliveries/s = from the first request the
 * sink got to the last (the baseline's clock also starts after its warm-up);
 * the time from the spawn (module loading, connections, the relay's first
 * run) is in the notes: on a loaded 2-core machine the boot alone takes
 * seconds. CPU per delivery once they flow: the webhooks process's, and PostgreSQL's backends of the bench database
 * (the other roles' sessions included, idle but for their sweeps). BENCH_PROFILE: a CPU profile of the webhooks process
 * (`<prefix>-webhooks-split/`).
 */
export async function splitWebhooksFigure(events: number, maxInFlight?: number): Promise<FigureResult> {
  const sys = new SplitSystem();
  const sink = spawn(process.execPath, [fileURLToPath(new URL("./sink-child.ts", import.meta.url))], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      sink.stdout.once("data", (d: Buffer) => resolve(Number(d.toString().trim())));
      sink.once("exit", (code) => reject(new Error(`sink exited (${code})`)));
    });
    const sinkUrl = `http://127.0.0.1:${port}`;
    const stats = async () => (await (await fetch(`${sinkUrl}/stats`)).json()) as { received: number; distinct: number; firstAt: number; lastAt: number };
    await sys.start();
    await sys.spawnRole("services", "services");
    await sys.spawnRole("gateway", "gateway");
    await sys.spawnRole("workers", "workers", { WORKER_GROUPS: "scheduler,renewals,payments" });
    const { api } = await sys.createMerchant("Bench");
    const created = await api.post("/api/v1/webhook-endpoints", { url: `${sinkUrl}/hooks`, ...(maxInFlight !== undefined && { maxInFlight }) });
    if (created.status !== 201) throw new Error(`endpoint create failed: ${created.status} ${created.text}`);
    const endpointMaxInFlight = created.body.maxInFlight;
    // One plan through the API (its event is the model), the others through the outbox use case in one transaction:
    // creating thousands of plans over HTTP on a loaded 2-core machine takes minutes and measures nothing here.
    const plan = await api.post("/api/v1/subscription-plans", { name: "Plan 0", amount: "9.99", currency: "USD", interval: "MONTH" });
    if (plan.status !== 201) throw new Error(`plan create failed: ${plan.status} ${plan.text}`);
    const [model] = await sys.sql<{ merchant_id: string; data: Record<string, unknown> }>("select merchant_id, data from events where type = 'plan.created'");
    const orm = await createOrm({ databaseUrl: sys.db.url, poolMax: 1, entities });
    try {
      await orm.em.fork().transactional(async (em) => {
        for (let i = 1; i < events; i++) {
          recordEvent(em, systemClock, { merchantId: model!.merchant_id, type: "plan.created", data: { ...model!.data, id: randomUUID(), name: `Plan ${i}` } });
        }
      });
    } finally {
      await orm.close();
    }
    const profile = process.env.BENCH_PROFILE ? `${process.env.BENCH_PROFILE}-webhooks-split` : undefined;
    const webhooks = await spawnWebhooks(sys, profile);
    let got = await stats();
    // The process's CPU once deliveries flow (boot and the relay's first batch behind it), and at the end.
    let cpuAtFirst: { seconds: number; pg: number; received: number } | undefined;
    for (const deadline = Date.now() + 600_000; got.received < events && Date.now() < deadline; got = await stats()) {
      if (!cpuAtFirst && got.received > 0)
        cpuAtFirst = { seconds: (await cpuSeconds(webhooks.child.pid!)) ?? NaN, pg: await databaseCpuSeconds(sys.db.name), received: got.received };
      await sleep(20);
    }
    const seconds = (got.lastAt - webhooks.spawnedAt) / 1000;
    const steady = (got.received - 1) / ((got.lastAt - got.firstAt) / 1000);
    const cpuEnd = (await cpuSeconds(webhooks.child.pid!)) ?? NaN;
    const pgEnd = await databaseCpuSeconds(sys.db.name);
    const cpuPerDelivery = cpuAtFirst ? ((cpuEnd - cpuAtFirst.seconds) * 1000) / (events - cpuAtFirst.received) : NaN;
    const pgPerDelivery = cpuAtFirst ? ((pgEnd - cpuAtFirst.pg) * 1000) / (events - cpuAtFirst.received) : NaN;
    await webhooks.stop();
    let row: { ok: number } | undefined;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(50)) {
      [row] = await sys.sql<{ ok: number }>("select count(*)::int as ok from webhook_deliveries where status = 'SUCCEEDED'");
      if (row!.ok >= events) break;
    }
    got = await stats();
    const ok = got.distinct === events && got.received === events && row!.ok === events;
    return {
      values: { deliveries_per_s: steady, from_spawn_per_s: events / seconds, cpu_ms_per_delivery: cpuPerDelivery, pg_cpu_ms_per_delivery: pgPerDelivery },
      ok,
      correctness: `${got.received} received, ${got.distinct} distinct, ${row!.ok} succeeded`,
      notes:
        `B7 split: endpoint maxInFlight ${endpointMaxInFlight}${maxInFlight === undefined ? " (the API default)" : ""}; ${events} events in ${seconds.toFixed(2)} s from the webhooks process's spawn ` +
        `(first delivery ${((got.firstAt - webhooks.spawnedAt) / 1000).toFixed(2)} s after it; ${steady.toFixed(0)}/s first→last); ` +
        `the webhooks process used ${cpuEnd.toFixed(2)} s of CPU in all, ${cpuPerDelivery.toFixed(2)} ms per delivery once they flowed (steadier than /s on a shared machine); ` +
        `PostgreSQL's backends of the bench database ${pgPerDelivery.toFixed(2)} ms per delivery`,
    };
  } finally {
    sink.kill("SIGTERM");
    await sys.close();
  }
}

/** The webhooks worker process, started last (as an SRE scales it up). */
function spawnWebhooks(sys: SplitSystem, profileDir?: string) {
  return sys.spawnRole("webhooks", "workers", { WORKER_GROUPS: "webhooks" }, profileDir);
}

/**
 * B3 then B1 against the service as an SRE runs it (issue 27): `split` — gateway, services and workers
 * (every group) as separate processes, the Kubernetes shape — or `all` — one `npm start` process. The load
 * generator is the baselines' own (loadChild). After both, the resident memory of each process (the target
 * "RSS of npm start after B1 + B3 ≤ 250 MiB" reads the `all` shape's).
 */
export class SplitApiFigures {
  readonly sys = new SplitSystem();
  private roles: RoleProcess[] = [];
  private apiKey = "";
  private planId = "";
  private userId = "";

  readonly shape: "split" | "all";

  constructor(shape: "split" | "all") {
    this.shape = shape;
  }

  async start(): Promise<void> {
    await this.sys.start();
    if (this.shape === "all") {
      this.roles.push(await this.sys.spawnRole("npm start", "all"));
    } else {
      // BENCH_PROFILE: CPU profiles of the gateway and the services (`<prefix>-api-split/`), written when they stop.
      const profile = process.env.BENCH_PROFILE ? `${process.env.BENCH_PROFILE}-api-split` : undefined;
      this.roles.push(await this.sys.spawnRole("services", "services", {}, profile));
      this.roles.push(await this.sys.spawnRole("gateway", "gateway", {}, profile));
      this.roles.push(await this.sys.spawnRole("workers", "workers"));
    }
    const merchant = await this.sys.createMerchant("Bench");
    this.apiKey = merchant.apiKey;
    this.planId = (await createPlan(merchant.api, { amount: "1" })).id;
    this.userId = (await createWalletUser(this.sys as unknown as TestSystem)).id;
  }

  async create(): Promise<FigureResult> {
    return createLoad(this.target());
  }

  async read(): Promise<FigureResult> {
    const result = await readLoad(this.target());
    result.notes = `${this.shape === "all" ? "npm start" : "split roles"}: ${result.notes}`;
    return result;
  }

  private target(): ApiTarget {
    return { baseUrl: this.sys.baseUrl, apiKey: this.apiKey, planId: this.planId, userId: this.userId, sql: (q) => this.sys.sql(q) };
  }

  /** Each process's resident memory now and at its peak, and what of it V8's heap holds (its /metrics). */
  async memory(): Promise<{ name: string; rss: number; peak: number; heap: string }[]> {
    return Promise.all(
      this.roles.map(async (r) => {
        const metrics = await fetch(`http://127.0.0.1:${r.opsPort}/metrics`).then((res) => res.text());
        const gauge = (name: string) => Math.round(Number(new RegExp(`^${name} (\\S+)$`, "m").exec(metrics)?.[1] ?? NaN) / 2 ** 20);
        const heap = `V8 heap ${gauge("nodejs_heap_size_used_bytes")} used of ${gauge("nodejs_heap_size_total_bytes")} MiB, external ${gauge("nodejs_external_memory_bytes")} MiB`;
        return { name: r.name, ...(await residentMib(r.child.pid!)), heap };
      }),
    );
  }

  close(): Promise<void> {
    return this.sys.close();
  }
}
