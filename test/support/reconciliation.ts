import { debitUnderChargeKey } from "./billing.ts";
import { make } from "./factories/index.ts";
import type { TestSystem } from "./system.ts";

/**
 * What the reconciliation tests arrange: charge rows as the billing engine
 * leaves them, each on a period of its own, and money moved in the wallet
 * under a charge's key (with or without its row agreeing).
 */
export function reconciliationArrangements(sys: TestSystem) {
  let period = 100;
  return {
    /** A charge on a new period; a SUCCEEDED one is billed (the subscription moves past it), as a settle does. */
    async chargeRow(
      subscriptionId: string,
      status: "PENDING" | "SUCCEEDED" | "FAILED",
      amount: string,
      traits: { parked?: boolean; createdSecondsAgo?: number } = {},
    ): Promise<string> {
      period += 1;
      const { id } = await make.charge(sys, { subscriptionId, status, amount, period: { index: period }, ...traits });
      if (status === "SUCCEEDED")
        await sys.sql("update subscriptions set next_period_index = greatest(next_period_index, ?) where id = ?", [period + 1, subscriptionId]);
      return id;
    },
    /** The latest period chargeRow used. */
    lastPeriod: () => period,
    /** Money moved under `subscription-charge-<chargeId>`, through the wallet service. */
    walletCharge: (chargeId: string, walletUserId: string, merchantId: string, amount: string): Promise<void> =>
      debitUnderChargeKey(sys, chargeId, { walletUserId, merchantId, amount, description: "reconciliation test" }),
  };
}
