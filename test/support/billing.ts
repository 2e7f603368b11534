import { DUE_FOR_RENEWAL } from "../../services/subscriptions/due-predicates.ts";
import { eventually } from "./eventually.ts";
import type { Client } from "@connectrpc/connect";
import { ApprovalOutcome, type SubscriptionsService } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import type { ApiClient } from "./http.ts";
import type { TestSystem } from "./system.ts";
import { createPlan, createSubscription, createWalletUser, tokenOf, type WalletUserFixture } from "./subscriptions.ts";
import { RpcClients } from "../../services/platform/rpc/clients.ts";
import { WalletService } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { createLogger } from "../../services/platform/logger.ts";
import { subscriptionPorts, type SubscriptionPorts } from "../../services/subscriptions/ports.ts";

/** Arrangement helpers for recurring-billing tests (sandbox clock, approved subscriptions, charges). */

export const DAY = 86_400;

export async function serviceNow(sys: TestSystem): Promise<Date> {
  const res = await sys.admin.get("/admin/v1/sandbox/clock");
  if (res.status !== 200) throw new Error(`clock read failed: ${res.status} ${res.text}`);
  return new Date(res.body.now);
}

export async function advanceBy(sys: TestSystem, seconds: number): Promise<Date> {
  const res = await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: Math.ceil(seconds) });
  if (res.status !== 200) throw new Error(`clock advance failed: ${res.status} ${res.text}`);
  return new Date(res.body.now);
}

/** Moves the service clock to just after `target` (never back). */
export async function advanceTo(sys: TestSystem, target: Date): Promise<Date> {
  const now = await serviceNow(sys);
  const seconds = Math.ceil((target.getTime() - now.getTime()) / 1000);
  return seconds > 0 ? advanceBy(sys, seconds) : now;
}

export interface ApprovedSubscription {
  subscriptionId: string;
  plan: any;
  user: WalletUserFixture;
}

/** A plan, a funded wallet user and a subscription the user approved (first payment taken unless the plan has a trial). */
export async function approvedSubscription(
  sys: TestSystem,
  api: ApiClient,
  client: Client<typeof SubscriptionsService>,
  options: { plan?: Record<string, unknown>; credits?: Record<string, string>; asset?: string; user?: WalletUserFixture } = {},
): Promise<ApprovedSubscription> {
  const plan = await createPlan(api, options.plan ?? {});
  const user = options.user ?? (await createWalletUser(sys, options.credits ?? { USDT_TRON: "1000" }));
  const s = await createSubscription(api, plan.id, user.id);
  const res = await client.approveAuthorization({ token: tokenOf(s.authorizationUrl), walletUserId: user.id, fundingAsset: options.asset ?? "USDT_TRON" });
  if (res.outcome !== ApprovalOutcome.APPROVED) throw new Error(`approval refused: ${res.message}`);
  return { subscriptionId: s.subscriptionId, plan, user };
}

export interface ChargeRowView {
  id: string;
  period_index: number;
  attempt: number;
  status: string;
  failure_reason: string | null;
  period_start: Date;
  period_end: Date;
  amount: string;
  asset_amount: string | null;
}

/** The subscription's period charges (not plan-change charges), by period and attempt. */
export async function chargesOf(sys: TestSystem, subscriptionId: string): Promise<ChargeRowView[]> {
  const rows = await sys.sql(
    `select id, period_index, attempt, status, failure_reason, period_start, period_end, amount::text, asset_amount::text
       from subscription_charges where subscription_id = ? and change_session_id is null order by period_index, attempt`,
    [subscriptionId],
  );
  return rows.map((r) => ({ ...r, period_start: new Date(r.period_start), period_end: new Date(r.period_end) }));
}

/** Polls until the subscription has `count` period charges, none of them in flight. */
export async function waitForCharges(sys: TestSystem, subscriptionId: string, count: number, timeoutMs = 15_000): Promise<ChargeRowView[]> {
  let charges: ChargeRowView[] = [];
  return eventually(
    async () => {
      charges = await chargesOf(sys, subscriptionId);
      return charges.length === count && charges.every((c) => c.status !== "PENDING") ? charges : undefined;
    },
    timeoutMs,
    () => `subscription ${subscriptionId} to have ${count} settled charges (has ${charges.length}: ${charges.map((c) => c.status).join(",")})`,
  );
}

export async function subscriptionOf(api: ApiClient, id: string): Promise<any> {
  const res = await api.get(`/api/v1/subscriptions/${id}`);
  if (res.status !== 200) throw new Error(`subscription read failed: ${res.status} ${res.text}`);
  return res.body;
}

/**
 * Waits until the engine has nothing left to do on the service clock: no
 * subscription due (billing date or retry passed) and no charge in flight.
 */
export async function waitForQuiet(sys: TestSystem, timeoutMs = 20_000): Promise<void> {
  let row: { due: string; pending: string } | undefined;
  await eventually(
    async () => {
      const now = await serviceNow(sys);
      [row] = await sys.sql<{ due: string; pending: string }>(
        `select (select count(*) from subscriptions
                  where ${DUE_FOR_RENEWAL()}) as due,
                (select count(*) from subscription_charges where status = 'PENDING') as pending`,
        [now, now],
      );
      return Number(row!.due) === 0 && Number(row!.pending) === 0;
    },
    timeoutMs,
    () => `the engine to be quiet (${row?.due} due, ${row?.pending} pending)`,
    100,
  );
}

/** Polls until the subscription's status is `status`. */
export async function waitForStatus(api: ApiClient, id: string, status: string, timeoutMs = 10_000): Promise<any> {
  let sub: any;
  return eventually(
    async () => {
      sub = await subscriptionOf(api, id);
      return sub.status === status ? sub : undefined;
    },
    timeoutMs,
    () => `subscription ${id} to be ${status} (is ${sub?.status})`,
  );
}

/** The subscriptions' ports over real RPC clients to the test system, for calling renewal use cases directly. */
export function portsFor(sys: TestSystem): { ports: SubscriptionPorts; close(): void } {
  const rpc = new RpcClients(sys.config.internalApiToken);
  return { ports: subscriptionPorts({ rpc, config: sys.config, queues: sys.system.queues!, logger: createLogger("silent") }), close: () => rpc.close() };
}

/**
 * Money moved in the wallet under a charge's key (`subscription-charge-<id>`), as the charge step moves it, with
 * no settle after it: what a worker that died after the debit leaves, or money reconciliation must match to its row.
 */
export async function debitUnderChargeKey(
  sys: TestSystem,
  chargeId: string,
  debit: { walletUserId: string; merchantId: string; amount: string; description: string },
): Promise<void> {
  const rpc = new RpcClients(sys.config.internalApiToken);
  try {
    await rpc.client(WalletService, sys.config.serviceUrls.wallet).charge({ idempotencyKey: `subscription-charge-${chargeId}`, asset: "USDT_TRON", ...debit });
  } finally {
    rpc.close();
  }
}

/** Ledger transactions that moved money for a subscription's charges (one per successful charge, never more). */
export async function debitsOf(sys: TestSystem, subscriptionId: string): Promise<number> {
  const [row] = await sys.sql<{ n: number }>(
    `select count(*)::int as n from ledger_transactions t
      where t.idempotency_key in (select 'subscription-charge-' || id from subscription_charges where subscription_id = ?)`,
    [subscriptionId],
  );
  return row!.n;
}
