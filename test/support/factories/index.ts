import { charge } from "./charges.ts";
import { delivery, deliveryAttempt } from "./deliveries.ts";
import { event } from "./events.ts";
import { merchant } from "./merchants.ts";
import { payout } from "./payouts.ts";
import { refund } from "./refunds.ts";

/**
 * Rows a test arranges directly, one insert per factory, with status traits
 * (`make.charge(sys, { subscriptionId, status: "SUCCEEDED" })`). For what the
 * public API can make, tests use the API; these are for states it cannot reach
 * on demand (a charge left in flight by a crash, a forged payout, an old event).
 */
export const make = { charge, refund, event, delivery, deliveryAttempt, payout, merchant };
export type { Db } from "./db.ts";
