import type { Plan } from "../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import type { UseCaseContext } from "../platform/use-case.ts";
import type { AuthorizationRow, SubscriptionRow } from "./entities.ts";
import { effectiveStatus, findByToken } from "./authorization-lookup.ts";
import { fetchMerchantName, fetchPlan, type SubscriptionPorts } from "./ports.ts";

export interface AuthorizationView {
  authorization: AuthorizationRow;
  /** The status the customer should see (an overdue PENDING is EXPIRED). */
  status: AuthorizationRow["status"];
  subscription: SubscriptionRow;
  merchantName: string;
  plan: Plan;
}

/** Everything the hosted page shows for a token: what is being approved, for whom, by whom. */
export async function getAuthorization(ctx: UseCaseContext, ports: SubscriptionPorts, token: string): Promise<AuthorizationView> {
  const { authorization, subscription } = await findByToken(ctx.em, token);
  const [plan, merchantName] = await Promise.all([
    fetchPlan(ports, subscription.merchantId, subscription.planId),
    fetchMerchantName(ports, subscription.merchantId),
  ]);
  return { authorization, status: effectiveStatus(authorization, ctx.clock.now()), subscription, merchantName, plan };
}
