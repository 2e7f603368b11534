import type { UseCaseContext } from "../../platform/use-case.ts";
import { invalid } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { cancelSubscriptionBy } from "../cancel-subscription.ts";
import type { SubscriptionPorts } from "../ports.ts";
import { CUSTOMER_CANCELLED } from "../contract.ts";

/**
 * The customer cancels one of their subscriptions (any merchant's): the
 * merchant's cancel with reason CUSTOMER_CANCELLED — same status move, same
 * `subscription.cancelled` event, pending plan changes cancelled in the same
 * transaction, a charge in flight settled first. Another customer's
 * subscription is SUBSCRIPTION_NOT_FOUND, like a missing one. The caller
 * (page or wallet app) has authenticated the customer and checked the PIN.
 */
export async function cancelSubscriptionForCustomer(ctx: UseCaseContext, ports: SubscriptionPorts, walletUserId: string, subscriptionId: string) {
  if (!isUuid(walletUserId)) throw invalid("INVALID_REQUEST", "walletUserId: must be a UUID");
  return cancelSubscriptionBy(ctx, ports, { walletUserId }, subscriptionId, CUSTOMER_CANCELLED);
}
