import type { UseCaseContext } from "../../platform/use-case.ts";
import type { ChangeSessionRow } from "./change-session-entities.ts";
import { findChangeSession } from "./change-session-store.ts";
import { findSubscription } from "../subscription-store.ts";

/** One session of the merchant's subscription: SUBSCRIPTION_NOT_FOUND, then CHANGE_SESSION_NOT_FOUND. */
export async function getChangeSession(ctx: UseCaseContext, merchantId: string, subscriptionId: string, id: string): Promise<ChangeSessionRow> {
  const sub = await findSubscription(ctx.em, subscriptionId, merchantId);
  return findChangeSession(ctx.em, merchantId, sub.id, id);
}
