import type { UseCaseContext } from "../platform/use-case.ts";
import type { AuthorizationRow, SubscriptionRow } from "./entities.ts";
import { readSubscriptionWithAuthorization } from "./subscription-store.ts";

/** Another merchant's subscription is indistinguishable from a missing one. One prepared statement (subscription-store.ts). */
export async function getSubscription(
  ctx: UseCaseContext,
  merchantId: string,
  id: string,
): Promise<{ subscription: SubscriptionRow; authorization: AuthorizationRow | null }> {
  return readSubscriptionWithAuthorization(ctx.em, id, merchantId);
}
