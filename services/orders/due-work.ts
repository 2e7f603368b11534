import { oldestOf, type DueWorkProbe } from "../platform/observability/due-work.ts";
import { OPEN_STATUSES } from "./order-status.ts";

/** Lag probe of the payment-order expiry sweep. */
export const orderDueWork: DueWorkProbe[] = [
  {
    kind: "order_expiry",
    group: "payments",
    oldestDue: (em, now) =>
      oldestOf(em, "select min(expires_at) as oldest from payment_orders where status = any(?::text[]) and expires_at <= ?", [
        `{${OPEN_STATUSES.join(",")}}`,
        now,
      ]),
  },
];
