import type { DueWorkProbe } from "../platform/observability/due-work.ts";
import { oldestExpiredOpenOrderAt } from "./order-store.ts";

/** Lag probe of the payment-order expiry sweep. */
export const orderDueWork: DueWorkProbe[] = [{ kind: "order_expiry", group: "payments", oldestDue: oldestExpiredOpenOrderAt }];
