/**
 * The one place that reads process.env. Everything is parsed and checked at
 * start; a bad value stops the process with one line naming every bad variable.
 */
import { WALLET_CALL_TIMEOUT_MS } from "./wallet-calls/wallet-call.ts";

/**
 * The shortest RPC deadline allowed: a call that settles a charge or a
 * refund waits on one wallet call (WALLET_CALL_TIMEOUT_MS) and must still
 * answer inside its own deadline (the chain: wallet-calls/wallet-call.ts).
 */
const RPC_TIMEOUT_MIN_MS = WALLET_CALL_TIMEOUT_MS + 1_000;

export interface Config {
  readonly port: number;
  readonly servicesPort: number;
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly publicBaseUrl: string;
  readonly adminApiKey: string | undefined;
  readonly internalApiToken: string;
  readonly sandbox: boolean;
  readonly production: boolean;
  readonly logLevel: string;
  readonly apiKeyMode: "test" | "live";
  readonly queuePrefix: string;
  readonly dbPoolMax: number;
  /** Server-side bound on one SQL statement (DB_STATEMENT_TIMEOUT_MS); past it the request answers 504. */
  readonly dbStatementTimeoutMs: number;
  /** Bound on taking a pool slot or opening a connection (DB_CONNECT_TIMEOUT_MS); past it the request answers 503. */
  readonly dbConnectTimeoutMs: number;
  /**
   * Named (server-side prepared) statements on the hot paths (DB_PREPARED_STATEMENTS, default true);
   * false behind a pooler in transaction mode, which cannot keep them (PgBouncer 1.18).
   */
  readonly dbPreparedStatements: boolean;
  /** Default deadline of an RPC from the gateway or a worker to a service (RPC_TIMEOUT_MS); past it 504. */
  readonly rpcTimeoutMs: number;
  /** Base URL per Connect service; all default to the local services server. */
  readonly serviceUrls: Readonly<Record<ServiceName, string>>;
  /** Services hosted by a `services` process (SERVICES, default all). */
  readonly services: readonly ServiceName[];
  /** Worker groups run by a `workers` process (WORKER_GROUPS, default all). */
  readonly workerGroups: readonly WorkerGroup[];
  readonly workerConcurrency: number;
  /**
   * Account-level extended PUBLIC keys that payment-order deposit addresses are
   * derived from, per network (XPUB_BTC, XPUB_ETH, XPUB_TRON). Required in live
   * production; sandbox and development default to public test vectors.
   */
  readonly depositXpubs: Readonly<Record<DepositNetwork, string>>;
  /** Interval of the Postgres sweeps that back every delayed job, in ms. */
  readonly sweepIntervalMs: number;
  /** Interval of the reconciliation job (RECONCILE_INTERVAL_MS). */
  readonly reconcileIntervalMs: number;
  /**
   * How far back in time each reconciliation reaches past the rows it has not
   * seen yet (RECONCILE_OVERLAP_MS): longer than any transaction plus clock
   * skew, so a row committed late is still checked (reconciliation-window-store.ts).
   */
  readonly reconcileOverlapMs: number;
  /** Interval of the full pass over all history that the reconciliation job also runs (RECONCILE_FULL_INTERVAL_MS). */
  readonly reconcileFullIntervalMs: number;
  /** Statement bound of that full pass (RECONCILE_FULL_TIMEOUT_MS); the other runs keep DB_STATEMENT_TIMEOUT_MS. */
  readonly reconcileFullTimeoutMs: number;

  /** 32-byte key that encrypts secrets we must be able to read back (webhook secrets). */
  readonly secretsKey: Buffer;
  /** Webhook deliveries: worker concurrency of the `webhooks` group (WEBHOOK_CONCURRENCY). */
  readonly webhookConcurrency: number;
  /** Call services that run in this process through Connect's in-process router transport (no HTTP/2 hop). */
  readonly rpcInProcess: boolean;
  /** How long a receiver has to answer 2xx (WEBHOOK_TIMEOUT_MS). */
  readonly webhookTimeoutMs: number;
  /** Delays before each retry, in ms (WEBHOOK_RETRY_SCHEDULE: comma-separated seconds). */
  readonly webhookRetryScheduleMs: readonly number[];
  /** Send to private/loopback addresses even outside sandbox mode (WEBHOOK_ALLOW_PRIVATE). */
  readonly webhookAllowPrivate: boolean;
  /** Recurring billing: days after a renewal's first failure on which it is retried (DUNNING_RETRY_DAYS, e.g. 1,3,5). */
  readonly dunningRetryDays: readonly number[];
  /** Where a subscription goes when its last retry fails (DUNNING_FINAL_STATUS: UNPAID or CANCELLED). */
  readonly dunningFinalStatus: "UNPAID" | "CANCELLED";
  /** Days before each renewal that subscription.charge_upcoming is sent (CHARGE_NOTICE_DAYS; 0 = never). */
  readonly chargeNoticeDays: number;
  /** Address the services (RPC) port binds to (SERVICES_HOST, default 127.0.0.1). */
  readonly servicesHost: string;
  /** Per-merchant token bucket on /api/v1: capacity (RATE_LIMIT_BURST) and refill per second (RATE_LIMIT_PER_SECOND). */
  readonly rateLimitBurst: number;
  readonly rateLimitPerSecond: number;
  /** Which peers may set X-Forwarded-For/-Proto/-Host (TRUST_PROXY): off, a hop count, or addresses/CIDRs. */
  readonly trustProxy: TrustProxy;
  /** Port of /metrics, /healthz and /readyz (METRICS_PORT, default 9464; 0 = not served). */
  readonly metricsPort: number;
  /** Redis Cluster seed nodes (REDIS_CLUSTER_NODES, host:port list); empty = REDIS_URL is one server. */
  readonly redisClusterNodes: readonly string[];
  /** Customer emails (SMTP_URL: smtp:// or smtps://, with credentials if any); undefined = emails are off. */
  readonly smtpUrl: string | undefined;
  /** The From of customer emails (EMAIL_FROM: an address, or "Name <address>"); required with SMTP_URL. */
  readonly emailFrom: string | undefined;
  /** The queue dashboard may retry, promote and remove jobs (QUEUE_DASHBOARD_WRITE; default read-only). */
  readonly queueDashboardWrite: boolean;
  /** OpenTelemetry tracing is on: an OTLP endpoint is set by the standard OTEL_* variables (see tracingEnabled). */
  readonly tracing: boolean;
  /** Minutes a new payout destination waits before it can be paid out to (PAYOUT_DESTINATION_COOLDOWN_MINUTES). */
  readonly payoutDestinationCooldownMinutes: number;
  /** The custody signer payouts are handed to outside sandbox mode (PAYOUT_SIGNER_URL); unset: live payouts are unavailable. */
  readonly payoutSignerUrl: string | undefined;
  /** Bearer token sent to the signer (PAYOUT_SIGNER_TOKEN), if it wants one. */
  readonly payoutSignerToken: string | undefined;
  /** How long records that grow with traffic are kept (RETENTION_*; docs/operations.md#retention). */
  readonly retention: Retention;
}

/**
 * Retention of the tables that grow with traffic. Postgres tables are dropped
 * a whole month at a time by the retention sweep (services/retention), so a
 * row lives at least this long and at most one month longer; the idempotency
 * keys are Redis entries that expire.
 */
export interface Retention {
  /** Events in the feed and GET /events/{id} (RETENTION_EVENTS_DAYS, default 90). */
  readonly eventsDays: number;
  /** Webhook deliveries and their attempts, counted from their event (RETENTION_WEBHOOK_DELIVERIES_DAYS, default 30). */
  readonly webhookDeliveriesDays: number;
  /** Idempotency-Key answers replayed by the gateway (RETENTION_IDEMPOTENCY_HOURS, default 24). */
  readonly idempotencyHours: number;
  /** The audit log, once its table is registered (RETENTION_AUDIT_ENTRIES_DAYS, default 400). */
  readonly auditEntriesDays: number;
}

/** `false`: forwarded headers are ignored; a number: that many proxy hops are trusted; a list: those peers are. */
export type TrustProxy = false | number | readonly string[];

export const SERVICE_NAMES = ["merchants", "catalog", "wallet", "subscriptions", "orders", "payouts", "events", "sandbox"] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const DEV_INTERNAL_TOKEN = "dev-internal-token-change-me";
const DEV_SECRETS_KEY = "ZGV2LXNlY3JldHMta2V5LWNoYW5nZS1tZS0zMmJ5dGU="; // 32 bytes, dev only

const DEPOSIT_NETWORKS = ["BITCOIN", "ETHEREUM", "TRON"] as const;
export type DepositNetwork = (typeof DEPOSIT_NETWORKS)[number];
/**
 * Sandbox/development deposit keys: the published account keys of the BIP39
 * test mnemonic "abandon … about" (BIP84 m/84'/0'/0' zpub; BIP44 m/44'/60'/0'
 * and m/44'/195'/0'). Anyone can spend from their addresses: test use only.
 */
export const TEST_DEPOSIT_XPUBS: Readonly<Record<DepositNetwork, string>> = Object.freeze({
  BITCOIN: "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs",
  ETHEREUM: "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt",
  TRON: "xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd",
});
const DEPOSIT_XPUB_ENV: Readonly<Record<DepositNetwork, string>> = { BITCOIN: "XPUB_BTC", ETHEREUM: "XPUB_ETH", TRON: "XPUB_TRON" };

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (name: string, fallback: string): string => {
    const v = env[name];
    return v === undefined || v === "" ? fallback : v;
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return Number(raw);
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    if (raw === "true" || raw === "1") return true;
    if (raw === "false" || raw === "0") return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };
  const url = (name: string, fallback: string, protocols: string[]): string => {
    const value = str(name, fallback);
    try {
      const parsed = new URL(value);
      if (!protocols.includes(parsed.protocol)) problems.push(`${name} must use ${protocols.join(" or ")} (got "${parsed.protocol}")`);
    } catch {
      // Never print credentials (SMTP_URL, DATABASE_URL carry a password): a value with userinfo is not shown at all.
      problems.push(
        value.includes("@") ? `${name} must be a URL (its value is not shown: it may carry credentials)` : `${name} must be a URL (got "${value}")`,
      );
    }
    return value.replace(/\/+$/, "");
  };
  const list = <T extends string>(name: string, allowed: readonly T[]): T[] => {
    const raw = env[name];
    if (raw === undefined || raw === "" || raw === "all") return [...allowed];
    const items = raw
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const bad = items.filter((i) => !allowed.includes(i as T));
    if (bad.length) problems.push(`${name} has unknown entries ${bad.join(", ")} (allowed: ${allowed.join(", ")})`);
    return items.filter((i) => allowed.includes(i as T)) as T[];
  };

  const production = str("NODE_ENV", "development") === "production";
  const port = int("PORT", 3000, 0, 65535);
  const servicesPort = int("SERVICES_PORT", 50051, 0, 65535);
  const sandbox = bool("SANDBOX", !production);
  const apiKeyMode = str("API_KEY_MODE", sandbox ? "test" : "live");
  if (apiKeyMode !== "test" && apiKeyMode !== "live") problems.push(`API_KEY_MODE must be test or live (got "${apiKeyMode}")`);

  const internalApiToken = str("INTERNAL_API_TOKEN", production ? "" : DEV_INTERNAL_TOKEN);
  if (internalApiToken.length < 16) problems.push("INTERNAL_API_TOKEN must be set to at least 16 characters");
  const adminApiKey = env.ADMIN_API_KEY ? env.ADMIN_API_KEY : undefined;
  // A guessable operator key is refused where it matters; a developer or a test harness may pick any.
  if (production && adminApiKey !== undefined && adminApiKey.length < 16) problems.push("ADMIN_API_KEY must be at least 16 characters in production");

  const secretsRaw = str("SECRETS_KEY", production ? "" : DEV_SECRETS_KEY);
  const secretsKey = Buffer.from(secretsRaw, "base64");
  if (secretsKey.length !== 32) problems.push("SECRETS_KEY must be 32 bytes, base64-encoded");

  // Seconds, as in docs/webhooks.md: 5 s, 5 min, 30 min, 2 h, 5 h, then 10 h six times (about 2.8 days).
  const retryRaw = str("WEBHOOK_RETRY_SCHEDULE", "5,300,1800,7200,18000,36000,36000,36000,36000,36000,36000");
  const webhookRetryScheduleMs = retryRaw.split(",").map((s) => s.trim());
  if (webhookRetryScheduleMs.length > 30 || webhookRetryScheduleMs.some((s) => !/^\d+(\.\d{1,3})?$/.test(s) || Number(s) <= 0 || Number(s) > 604_800)) {
    problems.push(`WEBHOOK_RETRY_SCHEDULE must be 1 to 30 comma-separated delays in seconds, each above 0 and at most 604800 (got "${retryRaw}")`);
  }

  // Offsets from a renewal's first failure, strictly increasing: "1,3,5" retries one, three and five days later.
  const dunningRaw = str("DUNNING_RETRY_DAYS", "1,3,5");
  const dunningRetryDays = dunningRaw.split(",").map((s) => Number(s.trim()));
  if (
    dunningRetryDays.length > 10 ||
    dunningRaw.split(",").some((s) => !/^\d{1,3}$/.test(s.trim())) ||
    dunningRetryDays.some((d, i) => d < 1 || d > 365 || (i > 0 && d <= dunningRetryDays[i - 1]!))
  ) {
    problems.push(`DUNNING_RETRY_DAYS must be 1 to 10 strictly increasing comma-separated whole days from 1 to 365 (got "${dunningRaw}")`);
  }
  const dunningFinalStatus = str("DUNNING_FINAL_STATUS", "UNPAID");
  if (dunningFinalStatus !== "UNPAID" && dunningFinalStatus !== "CANCELLED") {
    problems.push(`DUNNING_FINAL_STATUS must be UNPAID or CANCELLED (got "${dunningFinalStatus}")`);
  }

  // Live production must name its own keys: the test keys' addresses are spendable by anyone.
  const liveDeposits = production && !sandbox;
  const depositXpubs = Object.fromEntries(DEPOSIT_NETWORKS.map((n) => [n, str(DEPOSIT_XPUB_ENV[n], liveDeposits ? "" : TEST_DEPOSIT_XPUBS[n])])) as Record<
    DepositNetwork,
    string
  >;
  for (const n of DEPOSIT_NETWORKS) {
    const value = depositXpubs[n];
    if (value && /^[a-z]prv/.test(value)) problems.push(`${DEPOSIT_XPUB_ENV[n]} must be an extended PUBLIC key, never a private one`);
    else if (value && !/^[xyztuv]pub[1-9A-HJ-NP-Za-km-z]{100,112}$/.test(value))
      problems.push(`${DEPOSIT_XPUB_ENV[n]} must be an extended public key (xpub/zpub/tpub/vpub…)`);
  }

  const defaultServiceUrl = `http://127.0.0.1:${servicesPort}`;
  const serviceUrls = Object.fromEntries(
    SERVICE_NAMES.map((s) => [s, url(`${s.toUpperCase()}_SERVICE_URL`, defaultServiceUrl, ["http:", "https:"])]),
  ) as Record<ServiceName, string>;

  const config: Config = {
    port,
    servicesPort,
    databaseUrl: url("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/billing", ["postgres:", "postgresql:"]),
    redisUrl: url("REDIS_URL", "redis://127.0.0.1:6379", ["redis:", "rediss:"]),
    publicBaseUrl: url("PUBLIC_BASE_URL", `http://localhost:${port}`, ["http:", "https:"]),
    adminApiKey,
    internalApiToken,
    sandbox,
    production,
    logLevel: str("LOG_LEVEL", "info"),
    apiKeyMode: apiKeyMode as "test" | "live",
    queuePrefix: clusterSafePrefix(str("QUEUE_PREFIX", "billing")),
    dbPoolMax: int("DB_POOL_MAX", 10, 1, 200),
    dbStatementTimeoutMs: int("DB_STATEMENT_TIMEOUT_MS", 5_000, 100, 600_000),
    dbConnectTimeoutMs: int("DB_CONNECT_TIMEOUT_MS", 2_000, 100, 60_000),
    dbPreparedStatements: bool("DB_PREPARED_STATEMENTS", true),
    rpcTimeoutMs: int("RPC_TIMEOUT_MS", 8_000, RPC_TIMEOUT_MIN_MS, 120_000),
    serviceUrls: Object.freeze(serviceUrls),
    services: Object.freeze(list("SERVICES", SERVICE_NAMES)),
    workerGroups: Object.freeze(list<WorkerGroup>("WORKER_GROUPS", WORKER_GROUP_NAMES)),
    workerConcurrency: int("WORKER_CONCURRENCY", 10, 1, 1000),
    depositXpubs: Object.freeze(depositXpubs),
    sweepIntervalMs: int("SWEEP_INTERVAL_MS", 5000, 100, 3_600_000),
    reconcileIntervalMs: int("RECONCILE_INTERVAL_MS", 300_000, 1_000, 86_400_000),
    reconcileOverlapMs: int("RECONCILE_OVERLAP_MS", 600_000, 60_000, 86_400_000),
    reconcileFullIntervalMs: int("RECONCILE_FULL_INTERVAL_MS", 86_400_000, 60_000, 30 * 86_400_000),
    reconcileFullTimeoutMs: int("RECONCILE_FULL_TIMEOUT_MS", 900_000, 1_000, 3_600_000),
    secretsKey,
    webhookConcurrency: int("WEBHOOK_CONCURRENCY", 10, 1, 1000),
    rpcInProcess: bool("RPC_IN_PROCESS", true),
    webhookTimeoutMs: int("WEBHOOK_TIMEOUT_MS", 10_000, 100, 60_000),
    webhookRetryScheduleMs: Object.freeze(webhookRetryScheduleMs.map((s) => Math.round(Number(s) * 1000))),
    webhookAllowPrivate: bool("WEBHOOK_ALLOW_PRIVATE", false),
    dunningRetryDays: Object.freeze(dunningRetryDays),
    dunningFinalStatus: dunningFinalStatus as "UNPAID" | "CANCELLED",
    chargeNoticeDays: int("CHARGE_NOTICE_DAYS", 3, 0, 365),
    servicesHost: str("SERVICES_HOST", "127.0.0.1"),
    rateLimitBurst: int("RATE_LIMIT_BURST", 200, 1, 100_000),
    rateLimitPerSecond: int("RATE_LIMIT_PER_SECOND", 100, 1, 100_000),
    trustProxy: parseTrustProxy(str("TRUST_PROXY", "false"), problems),
    metricsPort: int("METRICS_PORT", 9464, 0, 65535),
    redisClusterNodes: Object.freeze(clusterNodes(env.REDIS_CLUSTER_NODES, problems)),
    queueDashboardWrite: bool("QUEUE_DASHBOARD_WRITE", false),
    tracing: tracingEnabled(env),
    payoutDestinationCooldownMinutes: int("PAYOUT_DESTINATION_COOLDOWN_MINUTES", 1440, 0, 525_600),
    payoutSignerUrl: env.PAYOUT_SIGNER_URL ? url("PAYOUT_SIGNER_URL", "", ["http:", "https:"]) : undefined,
    payoutSignerToken: env.PAYOUT_SIGNER_TOKEN ? env.PAYOUT_SIGNER_TOKEN : undefined,
    smtpUrl: env.SMTP_URL ? url("SMTP_URL", "", ["smtp:", "smtps:"]) : undefined,
    emailFrom: env.EMAIL_FROM ? env.EMAIL_FROM.trim() : undefined,
    retention: Object.freeze({
      eventsDays: int("RETENTION_EVENTS_DAYS", 90, 7, 3650),
      webhookDeliveriesDays: int("RETENTION_WEBHOOK_DELIVERIES_DAYS", 30, 1, 3650),
      idempotencyHours: int("RETENTION_IDEMPOTENCY_HOURS", 24, 1, 720),
      auditEntriesDays: int("RETENTION_AUDIT_ENTRIES_DAYS", 400, 30, 3650),
    }),
  };
  // A delivery is sent from its event's row: the event must outlive it (services/retention/retention-registry.ts).
  if (config.retention.webhookDeliveriesDays > config.retention.eventsDays) {
    problems.push(
      `RETENTION_WEBHOOK_DELIVERIES_DAYS must not exceed RETENTION_EVENTS_DAYS (got ${config.retention.webhookDeliveriesDays} > ${config.retention.eventsDays})`,
    );
  }
  if (config.smtpUrl && !config.emailFrom) problems.push("EMAIL_FROM must be set with SMTP_URL (the From of customer emails)");
  if (config.emailFrom && !/^([^<>\r\n]{0,200}<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/.test(config.emailFrom)) {
    problems.push(`EMAIL_FROM must be an address or "Name <address>" (got "${config.emailFrom}")`);
  }
  if (!["fatal", "error", "warn", "info", "debug", "trace", "silent"].includes(config.logLevel)) {
    problems.push(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "${config.logLevel}")`);
  }
  if (liveDeposits && config.services.includes("orders")) {
    for (const n of DEPOSIT_NETWORKS) if (!depositXpubs[n]) problems.push(`${DEPOSIT_XPUB_ENV[n]} must be set in production (payment-order deposit addresses)`);
  }
  if (problems.length) throw new ConfigError(`invalid configuration: ${problems.join("; ")}`);
  return Object.freeze(config);
}

const IPV4_OR_CIDR = /^(\d{1,3}\.){3}\d{1,3}(\/\d{1,2})?$/;
const IPV6_OR_CIDR = /^[0-9a-f:.]*:[0-9a-f:.]*(\/\d{1,3})?$/i;
const PROXY_PRESETS = ["loopback", "linklocal", "uniquelocal"];

/**
 * TRUST_PROXY: `false` (default) / `0`, a hop count (`1` = one proxy in front),
 * or a comma-separated list of proxy addresses and CIDRs (also the presets
 * loopback, linklocal, uniquelocal). `true` is refused: trusting every peer is
 * what lets a client pick its own address.
 */
function parseTrustProxy(raw: string, problems: string[]): TrustProxy {
  if (raw === "false" || raw === "0") return false;
  if (/^\d{1,2}$/.test(raw)) return Number(raw);
  const items = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = items.filter((i) => !PROXY_PRESETS.includes(i) && !IPV4_OR_CIDR.test(i) && !IPV6_OR_CIDR.test(i));
  if (items.length === 0 || bad.length) {
    problems.push(`TRUST_PROXY must be false, a hop count (1-99) or comma-separated proxy addresses/CIDRs (got "${raw}")`);
    return false;
  }
  return Object.freeze(items);
}

/** Worker groups scale separately; each owns the queues named after it. */
export const WORKER_GROUP_NAMES = ["scheduler", "renewals", "webhooks", "payments", "emails"] as const;
export type WorkerGroup = (typeof WORKER_GROUP_NAMES)[number];

/**
 * Every key of a queue must hash to one Redis Cluster slot: a `{tag}` in the
 * prefix does that. A prefix without braces is wrapped whole ("billing" →
 * "{billing}"), so one setting works on a single server and on a cluster.
 */
export function clusterSafePrefix(prefix: string): string {
  return /\{[^{}]+\}/.test(prefix) ? prefix : `{${prefix}}`;
}

function clusterNodes(raw: string | undefined, problems: string[]): string[] {
  if (!raw) return [];
  const nodes = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = nodes.filter((n) => !/^[A-Za-z0-9.\-\[\]:]+:\d{1,5}$/.test(n));
  if (bad.length) problems.push(`REDIS_CLUSTER_NODES must be comma-separated host:port entries (bad: ${bad.join(", ")})`);
  return nodes;
}

/**
 * Tracing follows the standard OpenTelemetry variables, read by the SDK
 * itself; this only decides whether to start it: an OTLP endpoint must be set,
 * and OTEL_SDK_DISABLED / OTEL_TRACES_EXPORTER=none turn it off.
 */
export function tracingEnabled(env: Env = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === "true") return false;
  if (env.OTEL_TRACES_EXPORTER === "none") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}
