import type { RouteSpec } from "../route.ts";
import { planRoutes } from "./plans.ts";
import { subscriptionRoutes } from "./subscriptions.ts";
import { changeSessionRoutes } from "./change-sessions.ts";
import { subscriptionChargeRoutes } from "./subscription-charges.ts";
import { adminMerchantRoutes } from "./admin-merchants.ts";
import { adminSandboxRoutes } from "./admin-sandbox.ts";
import { paymentOrderRoutes } from "./payment-orders.ts";
import { adminDepositRoutes } from "./admin-deposits.ts";
import { adminWalletRoutes } from "./admin-wallet.ts";
import { eventRoutes } from "./events.ts";
import { webhookEndpointRoutes } from "./webhook-endpoints.ts";
import { refundRoutes } from "./refunds.ts";
import { balanceRoutes } from "./balance.ts";
import { adminReconciliationRoutes } from "./admin-reconciliation.ts";
import { adminPayoutRoutes, orderRefundRoutes, payoutDestinationRoutes, payoutRoutes } from "./payouts.ts";
import { billingSettingsRoutes } from "./billing-settings.ts";
import { couponRoutes } from "./coupons.ts";
import { chargeRoutes } from "./charges.ts";
import { auditLogRoutes } from "./audit-log.ts";

/** Every REST operation: mounted by the app and documented by the OpenAPI builder. */
export const allRoutes: RouteSpec[] = [
  ...planRoutes,
  ...subscriptionRoutes,
  ...changeSessionRoutes,
  ...subscriptionChargeRoutes,
  ...adminMerchantRoutes,
  ...adminSandboxRoutes,
  ...adminWalletRoutes,
  ...adminReconciliationRoutes,
  ...paymentOrderRoutes,
  ...adminDepositRoutes,
  ...eventRoutes,
  ...webhookEndpointRoutes,
  ...refundRoutes,
  ...balanceRoutes,
  ...payoutDestinationRoutes,
  ...payoutRoutes,
  ...adminPayoutRoutes,
  ...billingSettingsRoutes,
  ...couponRoutes,
  ...chargeRoutes,
  ...orderRefundRoutes,
  ...auditLogRoutes,
];
