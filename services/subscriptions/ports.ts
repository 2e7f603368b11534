import type { KeyObject } from "node:crypto";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { CatalogService, Interval, type Plan } from "../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import { MerchantService } from "../../proto/gen/billing/merchants/v1/merchants_pb.ts";
import { WalletService, type WalletUser } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { PlanInterval } from "../catalog/entities.ts";
import type { Config } from "../platform/config.ts";
import type { Logger } from "../platform/logger.ts";
import type { Queues } from "../platform/queue/queues.ts";
import type { RpcClients } from "../platform/rpc/clients.ts";
import { conflict, notFound } from "../platform/errors.ts";
import { PLAN_ARCHIVED } from "../catalog/contract.ts";
import { isUuid } from "../platform/ids.ts";
import { billingPolicy } from "./renewals/billing-policy.ts";
import { billingPolicies, type BillingPolicies } from "./settings/billing-policies.ts";
import { deriveLinkKey } from "./authorization-token.ts";
import { chargeHandlers } from "./charge-outcomes.ts";
import type { ChargeHandlers } from "./charges/charge-ports.ts";

/**
 * What the subscription use cases need besides the database: the services
 * they call (never their tables), the producers for delayed jobs and the
 * public base URL the authorization links point to.
 */
export interface SubscriptionPorts {
  wallet: Client<typeof WalletService>;
  catalog: Client<typeof CatalogService>;
  merchants: Client<typeof MerchantService>;
  queues: Queues;
  publicBaseUrl: string;
  /** Derives change-session link tokens (authorization-token.ts). */
  linkKey: KeyObject;
  logger: Logger;
  /** Renewals, dunning and the advance notice, per merchant (settings/billing-policies.ts; defaults from the environment). */
  policies: BillingPolicies;
  /** The immutable price and cadence of plans already read by this process (fetchPlanPricing). */
  planPricing: Map<string, PlanPricing>;
  /** What a settled charge does, per purpose (charge-outcomes.ts). */
  chargeHandlers: ChargeHandlers;
}

/**
 * What a charge needs of a plan. A plan's price and cadence never change
 * after creation (a new price is a new plan), so they may be cached for the
 * life of the process; its name, status and metadata may change and are
 * never served from this cache.
 */
export type PlanPricing = Readonly<Pick<Plan, "id" | "merchantId" | "amount" | "currency" | "interval" | "intervalCount" | "maximumChargeAmount">>;

const PLAN_PRICING_CACHE_MAX = 10_000;

/** The plan's price and cadence, from this process's cache or read once (PLAN_NOT_FOUND as fetchPlan). */
export async function fetchPlanPricing(ports: SubscriptionPorts, merchantId: string, planId: string): Promise<PlanPricing> {
  const key = `${merchantId}/${planId}`;
  const hit = ports.planPricing.get(key);
  if (hit) return hit;
  const plan = await fetchPlan(ports, merchantId, planId);
  const pricing: PlanPricing = Object.freeze({
    id: plan.id,
    merchantId: plan.merchantId,
    amount: plan.amount,
    currency: plan.currency,
    interval: plan.interval,
    intervalCount: plan.intervalCount,
    maximumChargeAmount: plan.maximumChargeAmount,
  });
  if (ports.planPricing.size >= PLAN_PRICING_CACHE_MAX) ports.planPricing.clear();
  ports.planPricing.set(key, pricing);
  return pricing;
}

/** One set of ports per process (per RPC clients and config): clients, key derivation and caches are built once, not per job. */
const portsByRpc = new WeakMap<RpcClients, { config: Config; ports: SubscriptionPorts }>();

/**
 * One policy cache per process (per RPC clients, as the ports), shared by the
 * service's ports and the workers' ports: an update made by the service
 * forgets its merchant for the renewals running in the same process.
 */
const policiesByRpc = new WeakMap<RpcClients, { config: Config; policies: BillingPolicies }>();

function processPolicies(deps: { rpc: RpcClients; config: Config }): BillingPolicies {
  const cached = policiesByRpc.get(deps.rpc);
  if (cached && cached.config === deps.config) return cached.policies;
  const policies = billingPolicies(billingPolicy(deps.config));
  policiesByRpc.set(deps.rpc, { config: deps.config, policies });
  return policies;
}

export function processSubscriptionPorts(deps: { rpc: RpcClients; config: Config; queues: Queues; logger: Logger }): SubscriptionPorts {
  const cached = portsByRpc.get(deps.rpc);
  if (cached && cached.config === deps.config && cached.ports.queues === deps.queues) return cached.ports;
  const ports = subscriptionPorts(deps);
  portsByRpc.set(deps.rpc, { config: deps.config, ports });
  return ports;
}

/**
 * Builds the ports from a service's or job's dependencies. Service URLs are
 * read now, not at start-up: in one process the services' port is known only
 * after they listen.
 */
export function subscriptionPorts(deps: { rpc: RpcClients; config: Config; queues: Queues; logger: Logger }): SubscriptionPorts {
  const urls = deps.config.serviceUrls;
  return {
    wallet: deps.rpc.client(WalletService, urls.wallet),
    catalog: deps.rpc.client(CatalogService, urls.catalog),
    merchants: deps.rpc.client(MerchantService, urls.merchants),
    queues: deps.queues,
    publicBaseUrl: deps.config.publicBaseUrl,
    linkKey: deriveLinkKey(deps.config.secretsKey),
    logger: deps.logger,
    policies: processPolicies(deps),
    planPricing: new Map(),
    chargeHandlers: chargeHandlers(processPolicies(deps), deps.logger),
  };
}

const isNotFound = (err: unknown) => err instanceof ConnectError && err.code === Code.NotFound;

/** The merchant's plan, or PLAN_NOT_FOUND (another merchant's plan is not found either). */
export async function fetchPlan(ports: SubscriptionPorts, merchantId: string, planId: string): Promise<Plan> {
  if (!isUuid(planId)) throw notFound("PLAN_NOT_FOUND", `plan ${planId} not found`);
  try {
    const { plan } = await ports.catalog.getPlan({ merchantId, id: planId });
    if (!plan) throw notFound("PLAN_NOT_FOUND", `plan ${planId} not found`);
    return plan;
  } catch (err) {
    if (isNotFound(err)) throw notFound("PLAN_NOT_FOUND", `plan ${planId} not found`);
    throw err;
  }
}

/**
 * New subscriptions and change sessions only: an archived plan is not offered
 * (409 PLAN_ARCHIVED). The plan is the one fetched for this request (its status
 * is read from the catalog each time, never from a cache); renewals of existing
 * subscriptions never ask, so they keep renewing on an archived plan.
 */
export function refuseArchivedPlan(plan: Plan, field: string): void {
  if (plan.status === "ARCHIVED") throw conflict(PLAN_ARCHIVED, `${field}: plan ${plan.id} is archived and takes no new subscriptions or plan changes`);
}

export async function fetchWalletUserById(ports: SubscriptionPorts, id: string): Promise<WalletUser> {
  if (!isUuid(id)) throw notFound("WALLET_USER_NOT_FOUND", `wallet user ${id} not found`);
  try {
    const { user } = await ports.wallet.getWalletUser({ id, withoutAccounts: true });
    if (!user) throw notFound("WALLET_USER_NOT_FOUND", `wallet user ${id} not found`);
    return user;
  } catch (err) {
    if (isNotFound(err)) throw notFound("WALLET_USER_NOT_FOUND", `wallet user ${id} not found`);
    throw err;
  }
}

export async function fetchWalletUserByEmail(ports: SubscriptionPorts, email: string): Promise<WalletUser> {
  try {
    const { user } = await ports.wallet.findWalletUserByEmail({ email });
    if (!user) throw notFound("WALLET_USER_NOT_FOUND", "no wallet user has this customerEmail");
    return user;
  } catch (err) {
    if (isNotFound(err)) throw notFound("WALLET_USER_NOT_FOUND", "no wallet user has this customerEmail");
    throw err;
  }
}

export async function fetchMerchantName(ports: SubscriptionPorts, merchantId: string): Promise<string> {
  const { merchant } = await ports.merchants.getMerchant({ id: merchantId });
  return merchant?.name ?? "";
}

const INTERVAL_NAMES: Partial<Record<Interval, PlanInterval>> = {
  [Interval.DAY]: "DAY",
  [Interval.WEEK]: "WEEK",
  [Interval.MONTH]: "MONTH",
  [Interval.YEAR]: "YEAR",
};

export function planInterval(plan: Pick<Plan, "id" | "interval">): PlanInterval {
  const name = INTERVAL_NAMES[plan.interval];
  if (!name) throw new Error(`plan ${plan.id} has no interval`);
  return name;
}
