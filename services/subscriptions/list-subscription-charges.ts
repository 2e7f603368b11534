import type { FilterQuery } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../platform/pagination.ts";
import { CHARGE_STATUSES, SubscriptionCharge, type ChargeRow } from "./entities.ts";
import { findSubscription } from "./subscription-store.ts";

interface ListChargesInput {
  merchantId: string;
  subscriptionId: string;
  limit?: number | undefined;
  cursor?: string | undefined;
  status?: string | undefined;
}

/**
 * Every charge attempt of one of the merchant's subscriptions, newest first,
 * keyset-paginated: first payment, renewals, retries (each failed attempt is
 * its own row with its reason) and plan changes' immediate charges. A PENDING
 * row is a charge the wallet is moving right now (seconds at most).
 * Another merchant's subscription is SUBSCRIPTION_NOT_FOUND.
 */
export async function listSubscriptionCharges(ctx: UseCaseContext, input: ListChargesInput): Promise<Page<ChargeRow>> {
  if (input.status !== undefined && !(CHARGE_STATUSES as readonly string[]).includes(input.status)) {
    throw invalid("INVALID_REQUEST", `status: must be one of ${CHARGE_STATUSES.join(", ")}`);
  }
  const subscription = await findSubscription(ctx.em, input.subscriptionId, input.merchantId);
  const limit = clampLimit(input.limit);
  const where = {
    subscriptionId: subscription.id,
    ...(input.status !== undefined && { status: input.status }),
    ...afterCursor(input.cursor),
  } as FilterQuery<ChargeRow>;
  const rows = await ctx.em.find(SubscriptionCharge, where, { orderBy: KEYSET_ORDER, limit: limit + 1 });
  return toPage(rows, limit);
}
