import type { Plan } from "../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import type { UseCaseContext } from "../platform/use-case.ts";
import type { AuthorizationRow, SubscriptionRow } from "./entities.ts";
import { effectiveStatus, findByToken } from "./authorization-lookup.ts";
import { periodPrice } from "./pricing/period-price.ts";
import { fetchMerchantName, fetchPlan, type SubscriptionPorts } from "./ports.ts";

interface AuthorizationView {
  authorization: AuthorizationRow;
  /** The status the customer should see (an overdue PENDING is EXPIRED). */
  status: AuthorizationRow["status"];
  subscription: SubscriptionRow;
  merchantName: string;
  plan: Plan;
  /** What the discount does to the charges (undefined when nothing is taken off). */
  discount?: { subtotal: string; discountAmount: string; amount: string; periods: number | null };
}

/** Everything the hosted page shows for a token: what is being approved, for whom, by whom. */
export async function getAuthorization(ctx: UseCaseContext, ports: SubscriptionPorts, token: string): Promise<AuthorizationView> {
  const { authorization, subscription } = await findByToken(ctx.em, token);
  const [plan, merchantName] = await Promise.all([
    fetchPlan(ports, subscription.merchantId, subscription.planId),
    fetchMerchantName(ports, subscription.merchantId),
  ]);
  // Priced as the first charge will be (pricing/period-price.ts): the customer consents to what they will pay.
  const price = periodPrice(plan.amount, plan.currency, subscription);
  const discount =
    price.discountAmount !== "0"
      ? { subtotal: price.subtotal, discountAmount: price.discountAmount, amount: price.amount, periods: subscription.discountPeriodsRemaining ?? null }
      : undefined;
  return { authorization, status: effectiveStatus(authorization, ctx.clock.now()), subscription, merchantName, plan, ...(discount && { discount }) };
}
