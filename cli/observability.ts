import type { Telemetry } from "bullmq";
import type { Interceptor } from "@connectrpc/connect";
import { WORKER_GROUP_NAMES, type Config, type WorkerGroup } from "../services/platform/config.ts";
import type { Logger } from "../services/platform/logger.ts";
import type { Orm } from "../services/platform/database/orm.ts";
import type { Clock } from "../services/platform/clock.ts";
import type { Queues } from "../services/platform/queue/queues.ts";
import { createMetrics, EMAIL_KINDS, EMAIL_OUTCOMES, QUEUE_STATES, type BillingMetrics } from "../services/platform/observability/metrics.ts";
import { startMetricsServer, type MetricsServer } from "../services/platform/observability/metrics-server.ts";
import { lagSeconds, type DueWorkProbe } from "../services/platform/observability/due-work.ts";
import { rpcClientTracer } from "../services/platform/observability/rpc-observers.ts";
import { postgresCheck, redisCheck, runChecks, type ReadinessChecks } from "../services/platform/health/readiness.ts";
import { READINESS_TIMEOUT_MS } from "../services/platform/health/health-server.ts";
import { countSettledCharges } from "../services/subscriptions/charge-metrics.ts";
import { subscriptionDueWork } from "../services/subscriptions/due-work.ts";
import { orderDueWork } from "../services/orders/due-work.ts";
import { eventDueWork } from "../services/events/due-work.ts";
import { emailDueWork } from "../services/emails/due-work.ts";
import { payoutDueWork } from "../services/payouts/due-work.ts";
import { ANOMALY_KINDS } from "../services/reconciliation/contract.ts";
import { reconciliationSweep } from "../services/reconciliation/reconciliation-queue.ts";
import { retentionSweep } from "../services/retention/retention-queue.ts";
import { RETAINED_TABLES } from "../services/retention/retention-registry.ts";

/** Every kind of due work, each reported by the worker group that does it. */
export const DUE_WORK_PROBES: readonly DueWorkProbe[] = [...subscriptionDueWork, ...orderDueWork, ...payoutDueWork, ...eventDueWork, ...emailDueWork];

export interface ProcessObservability {
  /** BullMQ telemetry (bullmq-otel) when tracing is on. */
  telemetry: Telemetry | undefined;
  /** Connect client interceptors: a CLIENT span and its traceparent when tracing is on. */
  rpcClientInterceptors: Interceptor[];
  /** Adds a named readiness check to /readyz. */
  addReadiness(check: () => Promise<Record<string, string>>): void;
  /**
   * Queue depth, due-work lag, pool and readiness read on every scrape; charges counted.
   * Returns the registry for the roles to record into, or undefined when metrics are off.
   */
  observe(parts: {
    orm?: Orm | undefined;
    clock?: Clock | undefined;
    queues?: Queues | undefined;
    workerGroups: readonly WorkerGroup[];
  }): BillingMetrics | undefined;
  /** Serves /metrics, /healthz, /readyz when metrics are on. */
  listen(): Promise<void>;
  /** The operations port bound, if any. */
  port(): number | undefined;
  close(): Promise<void>;
}

/**
 * The composition root's half of observability: one registry for whatever
 * roles this process runs, the scrape-time collectors those roles need, and
 * the operations port. `metricsPort` 0 picks a free port (tests); without it
 * METRICS_PORT applies, where 0 means nothing is served nor recorded.
 */
export async function createObservability(config: Config, logger: Logger, metricsPort?: number): Promise<ProcessObservability> {
  const port = metricsPort ?? (config.metricsPort === 0 ? undefined : config.metricsPort);
  const metrics = createMetrics();
  // Its own dependencies (bounded by runChecks) and what a role adds (the gateway's, already bounded).
  const checks: ReadinessChecks = {};
  const extra: (() => Promise<Record<string, string>>)[] = [];
  let server: MetricsServer | undefined;
  const telemetry = config.tracing ? new (await import("bullmq-otel")).BullMQOtel({ tracerName: "billing" }) : undefined;
  const warned = new Set<string>();
  const guarded = (name: string, collect: () => Promise<void>) => async () => {
    try {
      await collect();
      warned.delete(name);
    } catch (err) {
      // The last values stay; /readyz says what is down.
      if (!warned.has(name)) logger.warn({ err: (err as Error).message, collector: name }, "metrics collector failed");
      warned.add(name);
    }
  };

  return {
    telemetry,
    rpcClientInterceptors: config.tracing ? [rpcClientTracer()] : [],
    addReadiness: (check) => void extra.push(check),
    observe({ orm, clock, queues, workerGroups }) {
      if (port === undefined) return undefined;
      if (orm) {
        countSettledCharges(orm, (kind, outcome, reason) => metrics.charges.inc({ kind, outcome, reason }));
        metrics.addCollector(
          guarded("db_pool", async () => {
            const pool = (await orm.em.getConnection().getNativeClient()) as { totalCount: number; idleCount: number; waitingCount: number };
            metrics.dbPoolConnections.set({ state: "idle" }, pool.idleCount);
            metrics.dbPoolConnections.set({ state: "used" }, pool.totalCount - pool.idleCount);
            metrics.dbPoolConnections.set({ state: "waiting" }, pool.waitingCount);
          }),
        );
        checks.postgres = postgresCheck(orm);
      }
      if (queues) {
        metrics.addCollector(
          guarded("queues", async () => {
            await Promise.all(
              WORKER_GROUP_NAMES.map(async (group) => {
                const counts = await queues.queue(group).getJobCounts(...QUEUE_STATES);
                for (const state of QUEUE_STATES) metrics.queueJobs.set({ queue: group, state }, counts[state] ?? 0);
              }),
            );
          }),
        );
        checks.redis = redisCheck(queues.connection);
      }
      // Counters alerts use exist at 0 in the process that counts them: increase() over a series that
      // appears with its first count sees no increase, so the first anomaly or failed email would not alert.
      if (workerGroups.includes(reconciliationSweep.group)) for (const check of ANOMALY_KINDS) metrics.reconciliationAnomalies.inc({ check }, 0);
      if (workerGroups.includes(retentionSweep.group)) for (const { table } of RETAINED_TABLES) metrics.retentionContention.inc({ table }, 0);
      if (workerGroups.includes("emails")) for (const kind of EMAIL_KINDS) for (const outcome of EMAIL_OUTCOMES) metrics.emails.inc({ kind, outcome }, 0);
      const probes = DUE_WORK_PROBES.filter((p) => workerGroups.includes(p.group));
      if (orm && clock && probes.length > 0) {
        for (const p of probes) metrics.dueWorkLag.set({ kind: p.kind }, 0);
        metrics.addCollector(
          guarded("due_work", async () => {
            const em = orm.em.fork();
            const now = clock.now();
            for (const p of probes) metrics.dueWorkLag.set({ kind: p.kind }, lagSeconds(await p.oldestDue(em, now), now));
          }),
        );
      }
      return metrics;
    },
    async listen() {
      if (port === undefined) return;
      // Each check bounded (READINESS_TIMEOUT_MS): a probe, and a scrape, answer quickly precisely when a dependency hangs.
      const readiness = async (): Promise<Record<string, string>> => {
        const [own, ...added] = await Promise.all([runChecks(checks, READINESS_TIMEOUT_MS).then((r) => r.checks), ...extra.map((c) => c())]);
        return Object.assign({}, own, ...added);
      };
      metrics.addCollector(async () => {
        for (const [check, state] of Object.entries(await readiness())) metrics.ready.set({ check }, state === "ok" ? 1 : 0);
      });
      try {
        server = await startMetricsServer(metrics, port, readiness);
      } catch (err) {
        // Another process of this machine holds the port (two roles started side by side without
        // their own METRICS_PORT): the role still runs; only its operations port is missing.
        if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
        logger.error({ port }, "METRICS_PORT is in use: /metrics, /healthz and /readyz are not served by this process");
        return;
      }
      logger.info({ port: server.port }, "metrics listening");
    },
    port: () => server?.port,
    async close() {
      await server?.close();
    },
  };
}
