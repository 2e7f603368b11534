import type { UseCaseContext } from "../platform/use-case.ts";
import type { AuthorizationRow, SubscriptionRow } from "./entities.ts";
import { currentAuthorization, findSubscription } from "./subscription-store.ts";

/** Another merchant's subscription is indistinguishable from a missing one. */
export async function getSubscription(
  ctx: UseCaseContext,
  merchantId: string,
  id: string,
): Promise<{ subscription: SubscriptionRow; authorization: AuthorizationRow | null }> {
  const subscription = await findSubscription(ctx.em, id, merchantId);
  return { subscription, authorization: await currentAuthorization(ctx.em, subscription.id) };
}
