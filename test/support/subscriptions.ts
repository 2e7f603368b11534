import { randomBytes } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import { SubscriptionsService } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { RpcClients } from "../../services/platform/rpc/clients.ts";
import type { ApiClient } from "./http.ts";
import type { TestSystem } from "./system.ts";

/** Arrangement helpers for subscription tests: everything goes through the public/admin APIs. */

export const PASSWORD = "correct horse battery";
export const PIN = "246810";

export interface WalletUserFixture {
  id: string;
  email: string;
  password: string;
  pin: string;
}

export async function createWalletUser(sys: TestSystem, credits: Record<string, string> = {}): Promise<WalletUserFixture> {
  const email = `customer-${randomBytes(5).toString("hex")}@example.com`;
  const res = await sys.admin.post("/admin/v1/wallet-users", { email, password: PASSWORD, pin: PIN });
  if (res.status !== 201) throw new Error(`wallet user create failed: ${res.status} ${res.text}`);
  for (const [asset, amount] of Object.entries(credits)) await credit(sys, res.body.id, asset, amount);
  return { id: res.body.id, email, password: PASSWORD, pin: PIN };
}

export async function credit(sys: TestSystem, walletUserId: string, asset: string, amount: string): Promise<void> {
  const res = await sys.admin.post(`/admin/v1/wallet-users/${walletUserId}/credits`, { asset, amount });
  if (res.status !== 201) throw new Error(`credit failed: ${res.status} ${res.text}`);
}

/** Balances per asset (canonical amounts) from the operator API. */
export async function balances(sys: TestSystem, walletUserId: string): Promise<Record<string, string>> {
  const res = await sys.admin.get(`/admin/v1/wallet-users/${walletUserId}`);
  if (res.status !== 200) throw new Error(`wallet user get failed: ${res.status} ${res.text}`);
  return Object.fromEntries((res.body.balances as { asset: string; balance: string }[]).map((b) => [b.asset, b.balance]));
}

export async function createPlan(api: ApiClient, overrides: Record<string, unknown> = {}): Promise<any> {
  const res = await api.post("/api/v1/subscription-plans", { name: "Pro", amount: "10.50", currency: "USD", interval: "MONTH", ...overrides });
  if (res.status !== 201) throw new Error(`plan create failed: ${res.status} ${res.text}`);
  return res.body;
}

export function subscriptionBody(planId: string, walletUserId: string, overrides: Record<string, unknown> = {}) {
  return {
    externalReference: `ext-${randomBytes(6).toString("hex")}`,
    planId,
    walletUserId,
    successUrl: "https://merchant.example/success?from=billing",
    cancelUrl: "https://merchant.example/cancel",
    ...overrides,
  };
}

export async function createSubscription(api: ApiClient, planId: string, walletUserId: string, overrides: Record<string, unknown> = {}) {
  const res = await api.post("/api/v1/subscriptions", subscriptionBody(planId, walletUserId, overrides));
  if (res.status !== 201) throw new Error(`subscription create failed: ${res.status} ${res.text}`);
  return res.body as { subscriptionId: string; status: string; authorizationUrl: string; authorizationExpiresAt: string };
}

export const tokenOf = (authorizationUrl: string) => new URL(authorizationUrl).pathname.split("/").pop()!;

/** The authorization URL on this test gateway (PUBLIC_BASE_URL is not the test port). */
export const localUrl = (sys: TestSystem, authorizationUrl: string) => `${sys.baseUrl}${new URL(authorizationUrl).pathname}`;

/** A Connect client for the subscriptions service, as the gateway has one. */
export function subscriptionsRpc(sys: TestSystem): { client: Client<typeof SubscriptionsService>; close(): void } {
  const rpc = new RpcClients(sys.config.internalApiToken);
  return { client: rpc.client(SubscriptionsService, `http://127.0.0.1:${sys.system.servicesPort}`), close: () => rpc.close() };
}

export async function eventsOf(sys: TestSystem, subscriptionId: string): Promise<{ type: string; data: any }[]> {
  return sys.sql(`select type, data from events where data->>'id' = ? or data->>'subscriptionId' = ? order by seq`, [subscriptionId, subscriptionId]);
}
