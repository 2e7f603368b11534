import { PerformanceObserver, constants as perfConstants } from "node:perf_hooks";
import v8 from "node:v8";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** Due work that a worker group exists to do; its lag is what that group scales on. */
const DUE_WORK_KINDS = [
  "renewal",
  "authorization_expiry",
  "plan_change",
  "order_expiry",
  "event_relay",
  "webhook_delivery",
  "customer_email",
  "payout_call",
  "payout_chain_check",
  "refund_claim_expiry",
] as const;
export type DueWorkKind = (typeof DUE_WORK_KINDS)[number];

export const QUEUE_STATES = ["waiting", "delayed", "active", "failed"] as const;
const CHARGE_KINDS = ["first", "renewal", "retry", "plan_change"] as const;
export type ChargeKind = (typeof CHARGE_KINDS)[number];
const WEBHOOK_ATTEMPT_OUTCOMES = ["succeeded", "failed", "timeout", "refused"] as const;
export type WebhookAttemptOutcome = (typeof WEBHOOK_ATTEMPT_OUTCOMES)[number];
export const EMAIL_KINDS = ["upcoming_charge", "charge_at_risk", "payment_failed", "receipt"] as const;
/** sent; failed = a temporary failure, retried later; parked = refused for good (SMTP 5xx) or out of attempts; skipped = the merchant's settings turn it off. */
export const EMAIL_OUTCOMES = ["sent", "failed", "parked", "skipped"] as const;

/** Seconds; covers a 2 ms cache hit up to a 10 s webhook timeout. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Read at scrape time (queue depth, lag, pool): each part of the process adds its own. */
type Collector = () => Promise<void> | void;

/**
 * One registry per process: whatever roles run here record into it and
 * /metrics serves it. Names and labels are a contract with the dashboards and
 * alerts in deploy/ (docs/operations.md); label values are bounded sets
 * (route templates, code names, enums), never ids, e-mails or URLs.
 */
export interface BillingMetrics {
  readonly registry: Registry;
  readonly httpServerDuration: Histogram<"http_request_method" | "http_route" | "http_response_status_code">;
  readonly rpcServerDuration: Histogram<"rpc_service" | "rpc_method" | "rpc_status_code">;
  readonly queueJobs: Gauge<"queue" | "state">;
  readonly jobDuration: Histogram<"job_name" | "outcome">;
  readonly dueWorkLag: Gauge<"kind">;
  readonly charges: Counter<"kind" | "outcome" | "reason">;
  readonly webhookAttempts: Counter<"outcome">;
  /** Customer emails (services/emails), by kind and outcome (EMAIL_KINDS, EMAIL_OUTCOMES). */
  readonly emails: Counter<"kind" | "outcome">;
  readonly dbPoolConnections: Gauge<"state">;
  /** Webhook endpoints the delivery engine disabled itself (the receiver answered 410 Gone). */
  readonly webhookEndpointsDisabled: Counter;
  /** Each readiness check of this process: 1 passing, 0 failing (what /readyz answers, for alerting). */
  readonly ready: Gauge<"check">;
  /** Anomalies found by reconciliation checks, by check name (fed by the reconciliation jobs). */
  readonly reconciliationAnomalies: Counter<"check">;
  /** Renewals of one subscription that raised an error (not a refused charge) while the rest of its set went on. */
  readonly renewalErrors: Counter;
  /** Monthly partitions the retention sweep created / dropped, by table (services/retention). */
  readonly retentionPartitionsCreated: Counter<"table">;
  readonly retentionPartitionsDropped: Counter<"table">;
  /** Steps of the retention sweep left for its next run because of lock contention (lock timeout or deadlock), by table. */
  readonly retentionContention: Counter<"table">;
  /** Estimated rows of each retained table (planner statistics), as of the last retention sweep. */
  readonly retentionRows: Gauge<"table">;
  /** Runs `collector` before every scrape (errors are logged by the caller's collector, never fail the scrape). */
  addCollector(collector: Collector): void;
  /** The Prometheus text exposition, after running the collectors. */
  scrape(): Promise<string>;
}

export function createMetrics(): BillingMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  observeLiveHeap(registry);
  const collectors: Collector[] = [];
  const registers = [registry];

  const metrics: BillingMetrics = {
    registry,
    httpServerDuration: new Histogram({
      name: "http_server_request_duration_seconds",
      help: "Duration of HTTP server requests (gateway), by route template.",
      labelNames: ["http_request_method", "http_route", "http_response_status_code"],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    rpcServerDuration: new Histogram({
      name: "rpc_server_call_duration_seconds",
      help: "Duration of Connect/gRPC calls served, by service, method and status code name.",
      labelNames: ["rpc_service", "rpc_method", "rpc_status_code"],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    queueJobs: new Gauge({
      name: "billing_queue_jobs",
      help: "Jobs per BullMQ queue (worker group) and state.",
      labelNames: ["queue", "state"],
      registers,
    }),
    jobDuration: new Histogram({
      name: "billing_job_duration_seconds",
      help: "Duration of processed jobs, by job name and outcome.",
      labelNames: ["job_name", "outcome"],
      buckets: JOB_BUCKETS,
      registers,
    }),
    dueWorkLag: new Gauge({
      name: "billing_due_work_lag_seconds",
      help: "Age of the oldest item due on the service clock and not yet done (0 when none), per kind.",
      labelNames: ["kind"],
      registers,
    }),
    charges: new Counter({
      name: "billing_charges_total",
      help: "Subscription charges settled, by kind, outcome and failure reason (none when succeeded).",
      labelNames: ["kind", "outcome", "reason"],
      registers,
    }),
    webhookAttempts: new Counter({
      name: "billing_webhook_attempts_total",
      help: "Webhook delivery attempts, by outcome.",
      labelNames: ["outcome"],
      registers,
    }),
    emails: new Counter({
      name: "billing_emails_total",
      help: "Customer emails by kind and outcome (sent, failed = retried later, parked = refused for good, skipped = turned off by the merchant).",
      labelNames: ["kind", "outcome"],
      registers,
    }),
    dbPoolConnections: new Gauge({
      name: "billing_db_pool_connections",
      help: "PostgreSQL pool connections by state (idle, used, waiting = callers queued for one).",
      labelNames: ["state"],
      registers,
    }),
    webhookEndpointsDisabled: new Counter({
      name: "billing_webhook_endpoints_disabled_total",
      help: "Webhook endpoints disabled by the delivery engine (receiver answered 410 Gone).",
      registers,
    }),
    ready: new Gauge({
      name: "billing_ready",
      help: "Readiness checks of this process (1 passing, 0 failing), as /readyz reports them.",
      labelNames: ["check"],
      registers,
    }),
    reconciliationAnomalies: new Counter({
      name: "billing_reconciliation_anomalies_total",
      help: "Anomalies found by reconciliation checks, by check.",
      labelNames: ["check"],
      registers,
    }),
    renewalErrors: new Counter({
      name: "billing_renewal_errors_total",
      help: "Subscriptions whose renewal raised an error (not a refused charge); the rest of the set was renewed.",
      registers,
    }),
    retentionPartitionsCreated: new Counter({
      name: "billing_retention_partitions_created_total",
      help: "Monthly partitions created ahead by the retention sweep, by table.",
      labelNames: ["table"],
      registers,
    }),
    retentionPartitionsDropped: new Counter({
      name: "billing_retention_partitions_dropped_total",
      help: "Monthly partitions dropped by the retention sweep (all rows past retention, none still needed), by table.",
      labelNames: ["table"],
      registers,
    }),
    retentionContention: new Counter({
      name: "billing_retention_contention_total",
      help: "Retention sweep steps (a month created or dropped, the default partition purged) left for the next run because a lock was not granted in time or a deadlock chose them, by table.",
      labelNames: ["table"],
      registers,
    }),
    retentionRows: new Gauge({
      name: "billing_retention_rows",
      help: "Estimated rows of each table kept by retention (planner statistics), as of the last retention sweep.",
      labelNames: ["table"],
      registers,
    }),
    addCollector(collector) {
      collectors.push(collector);
    },
    async scrape() {
      await Promise.all(collectors.map(async (c) => c()));
      return registry.metrics();
    },
  };
  // Series that alerts use exist from the start (a rate over a missing series is no alert).
  for (const outcome of WEBHOOK_ATTEMPT_OUTCOMES) metrics.webhookAttempts.inc({ outcome }, 0);
  metrics.renewalErrors.inc(0);
  return metrics;
}

/**
 * billing_heap_live_bytes: the V8 heap outside the young generation, read
 * right after each full (mark-compact) collection: what that collection found
 * alive. `nodejs_heap_size_used_bytes` at a scrape also counts the garbage
 * made since the last collection (with a 16 MiB semi-space, tens of MiB that
 * come and go with load), so it cannot tell a leak from a busy minute; this
 * moves only when what is kept moves. Until the first full collection, the
 * value at start.
 */
function observeLiveHeap(registry: Registry): void {
  const oldGeneration = () =>
    v8
      .getHeapSpaceStatistics()
      .filter((space) => space.space_name !== "new_space")
      .reduce((sum, space) => sum + space.space_used_size, 0);
  const gauge = new Gauge({
    name: "billing_heap_live_bytes",
    help: "V8 heap outside the young generation right after the last full (mark-compact) collection: the heap that is kept.",
    registers: [registry],
  });
  gauge.set(oldGeneration());
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind;
      if (kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) gauge.set(oldGeneration());
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  // The observer must not keep a process alive that is otherwise done.
  (observer as unknown as { unref?: () => void }).unref?.();
}
