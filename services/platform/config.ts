/**
 * The one place that reads process.env. Everything is parsed and checked at
 * start; a bad value stops the process with one line naming every bad variable.
 */
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
  /** Base URL per Connect service; all default to the local services server. */
  readonly serviceUrls: Readonly<Record<ServiceName, string>>;
  /** Services hosted by a `services` process (SERVICES, default all). */
  readonly services: readonly ServiceName[];
  /** Worker groups run by a `workers` process (WORKER_GROUPS, default all). */
  readonly workerGroups: readonly WorkerGroup[];
  readonly workerConcurrency: number;
  /** Interval of the Postgres sweeps that back every delayed job, in ms. */
  readonly sweepIntervalMs: number;
  /** 32-byte key that encrypts secrets we must be able to read back (webhook secrets). */
  readonly secretsKey: Buffer;
}

export const SERVICE_NAMES = ["merchants", "catalog", "wallet", "subscriptions", "orders", "events", "sandbox"] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const DEV_INTERNAL_TOKEN = "dev-internal-token-change-me";
const DEV_SECRETS_KEY = "ZGV2LXNlY3JldHMta2V5LWNoYW5nZS1tZS0zMmJ5dGU="; // 32 bytes, dev only

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
      problems.push(`${name} must be a URL (got "${value}")`);
    }
    return value.replace(/\/+$/, "");
  };
  const list = <T extends string>(name: string, allowed: readonly T[]): T[] => {
    const raw = env[name];
    if (raw === undefined || raw === "" || raw === "all") return [...allowed];
    const items = raw.split(",").map((s) => s.trim()).filter(Boolean);
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
  if (adminApiKey !== undefined && adminApiKey.length < 16) problems.push("ADMIN_API_KEY must be at least 16 characters");

  const secretsRaw = str("SECRETS_KEY", production ? "" : DEV_SECRETS_KEY);
  const secretsKey = Buffer.from(secretsRaw, "base64");
  if (secretsKey.length !== 32) problems.push("SECRETS_KEY must be 32 bytes, base64-encoded");

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
    queuePrefix: str("QUEUE_PREFIX", "billing"),
    dbPoolMax: int("DB_POOL_MAX", 10, 1, 200),
    serviceUrls: Object.freeze(serviceUrls),
    services: Object.freeze(list("SERVICES", SERVICE_NAMES)),
    workerGroups: Object.freeze(list<WorkerGroup>("WORKER_GROUPS", WORKER_GROUP_NAMES)),
    workerConcurrency: int("WORKER_CONCURRENCY", 10, 1, 1000),
    sweepIntervalMs: int("SWEEP_INTERVAL_MS", 5000, 100, 3_600_000),
    secretsKey,
  };
  if (!["fatal", "error", "warn", "info", "debug", "trace", "silent"].includes(config.logLevel)) {
    problems.push(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "${config.logLevel}")`);
  }
  if (problems.length) throw new ConfigError(`invalid configuration: ${problems.join("; ")}`);
  return Object.freeze(config);
}

/** Worker groups scale separately; each owns the queues named after it. */
export const WORKER_GROUP_NAMES = ["scheduler", "renewals", "webhooks", "payments"] as const;
export type WorkerGroup = (typeof WORKER_GROUP_NAMES)[number];
