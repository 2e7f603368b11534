import { expect } from "chai";
import type { Client } from "@connectrpc/connect";
import { ApprovalOutcome, type SubscriptionsService } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import type { ApiClient } from "./http.ts";
import type { TestSystem } from "./system.ts";
import { createSubscription, tokenOf } from "./subscriptions.ts";

/** Arrangement helpers for plan-change tests, through the public, admin and service APIs. */

/** A subscription the customer has approved (ACTIVE, or TRIALING for a trial plan), funded by `asset`. */
export async function approvedSubscription(
  api: ApiClient,
  client: Client<typeof SubscriptionsService>,
  planId: string,
  walletUserId: string,
  asset = "USDT_TRON",
): Promise<string> {
  const s = await createSubscription(api, planId, walletUserId);
  const res = await client.approveAuthorization({ token: tokenOf(s.authorizationUrl), walletUserId, fundingAsset: asset });
  expect(res.outcome, res.message).to.equal(ApprovalOutcome.APPROVED);
  return s.subscriptionId;
}

export function changeBody(requestedPlanId: string, overrides: Record<string, unknown> = {}) {
  return {
    requestedPlanId,
    successUrl: "https://merchant.example/changed?from=billing",
    cancelUrl: "https://merchant.example/kept",
    ...overrides,
  };
}

export async function createChange(api: ApiClient, subscriptionId: string, requestedPlanId: string, overrides: Record<string, unknown> = {}) {
  const res = await api.post(`/api/v1/subscriptions/${subscriptionId}/change-sessions`, changeBody(requestedPlanId, overrides));
  if (res.status !== 201) throw new Error(`change session create failed: ${res.status} ${res.text}`);
  return res.body as { id: string; status: string; approvalUrl: string; [key: string]: unknown };
}

export async function advanceClock(sys: TestSystem, seconds: number): Promise<void> {
  const res = await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds });
  if (res.status !== 200) throw new Error(`clock advance failed: ${res.status} ${res.text}`);
}

export const changeOf = async (api: ApiClient, subscriptionId: string, id: string) =>
  (await api.get(`/api/v1/subscriptions/${subscriptionId}/change-sessions/${id}`)).body;

export const subscriptionOf = async (api: ApiClient, id: string) => (await api.get(`/api/v1/subscriptions/${id}`)).body;

/** Event types of a change session, oldest first. */
export async function changeEventTypes(sys: TestSystem, changeSessionId: string): Promise<string[]> {
  const rows = await sys.sql<{ type: string }>("select type from events where data->>'id' = ? or data->>'changeSessionId' = ? order by seq", [
    changeSessionId,
    changeSessionId,
  ]);
  return rows.map((r) => r.type);
}
