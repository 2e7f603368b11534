import type { MigrationObject } from "@mikro-orm/core";
import { Migration0001Foundation } from "./0001-foundation.ts";
import { Migration0002Wallet } from "./0002-wallet.ts";
import { Migration0003Subscriptions } from "./0003-subscriptions.ts";
import { Migration0004Webhooks } from "./0004-webhooks.ts";
import { Migration0005PaymentOrders } from "./0005-payment-orders.ts";
import { Migration0006RecurringBilling } from "./0006-recurring-billing.ts";
import { Migration0007ChangeSessions } from "./0007-change-sessions.ts";
import { Migration0008EventFeed } from "./0008-event-feed.ts";
import { Migration0009MerchantCancelsChange } from "./0009-merchant-cancels-change.ts";
import { Migration0010Refunds } from "./0010-refunds.ts";
import { Migration0011PlanLifecycleAndSelfService } from "./0011-plan-lifecycle-and-self-service.ts";
import { Migration0012RateLimitsAndFeeds } from "./0012-rate-limits-and-feeds.ts";
import { Migration0013ReconciliationAndBackoff } from "./0013-reconciliation-and-backoff.ts";
import { Migration0018SpeedIndexes } from "./0018-speed-indexes.ts";
import { Migration0019ReviewFixes } from "./0019-review-fixes.ts";
import { Migration0020RecordVersions } from "./0020-record-versions.ts";
import { Migration0021HotUpdateRoom } from "./0021-hot-update-room.ts";
import { Migration0022WalletCallProtocol } from "./0022-wallet-call-protocol.ts";
import { Migration0023ChangeNotApplied } from "./0023-change-not-applied.ts";
import { Migration0024Payouts } from "./0024-payouts.ts";
import { Migration0025DunningSettingsAndFallback } from "./0025-dunning-settings-and-fallback.ts";
import { Migration0026PricingAndReceipts } from "./0026-pricing-and-receipts.ts";
import { Migration0027OrderRefunds } from "./0027-order-refunds.ts";
import { Migration0028DashboardMembers } from "./0028-dashboard-members.ts";
import { Migration0029CustomerEmails } from "./0029-customer-emails.ts";
import { Migration0030PayoutIndexes } from "./0030-payout-indexes.ts";
import { Migration0031AuditLog } from "./0031-audit-log.ts";
import { Migration0032MonthlyPartitions } from "./0032-monthly-partitions.ts";
import { Migration0033DashboardLookups } from "./0033-dashboard-lookups.ts";
import { Migration0034ApiKeyLastUse } from "./0034-api-key-last-use.ts";
import { Migration0035AnnouncedChargesIndex } from "./0035-announced-charges-index.ts";
import { Migration0036CreateIdempotencyKey } from "./0036-create-idempotency-key.ts";
import { Migration0037ReconciliationRuns } from "./0037-reconciliation-runs.ts";
import { Migration0038EventsWrittenOnce } from "./0038-events-written-once.ts";
import { Migration0039MerchantFeedHeads } from "./0039-merchant-feed-heads.ts";

/**
 * Every migration, in order. Hand-written SQL, committed, run explicitly by
 * `billing migrate` (and by `npm start` for a developer), never schema.update().
 */
export const migrations: MigrationObject[] = [
  { name: "0001-foundation", class: Migration0001Foundation },
  { name: "0002-wallet", class: Migration0002Wallet },
  { name: "0003-subscriptions", class: Migration0003Subscriptions },
  { name: "0004-webhooks", class: Migration0004Webhooks },
  { name: "0005-payment-orders", class: Migration0005PaymentOrders },
  { name: "0006-recurring-billing", class: Migration0006RecurringBilling },
  { name: "0007-change-sessions", class: Migration0007ChangeSessions },
  { name: "0008-event-feed", class: Migration0008EventFeed },
  { name: "0009-merchant-cancels-change", class: Migration0009MerchantCancelsChange },
  { name: "0010-refunds", class: Migration0010Refunds },
  { name: "0011-plan-lifecycle-and-self-service", class: Migration0011PlanLifecycleAndSelfService },
  { name: "0012-rate-limits-and-feeds", class: Migration0012RateLimitsAndFeeds },
  { name: "0013-reconciliation-and-backoff", class: Migration0013ReconciliationAndBackoff },
  { name: "0018-speed-indexes", class: Migration0018SpeedIndexes },
  { name: "0019-review-fixes", class: Migration0019ReviewFixes },
  { name: "0020-record-versions", class: Migration0020RecordVersions },
  { name: "0021-hot-update-room", class: Migration0021HotUpdateRoom },
  { name: "0022-wallet-call-protocol", class: Migration0022WalletCallProtocol },
  { name: "0023-change-not-applied", class: Migration0023ChangeNotApplied },
  { name: "0024-payouts", class: Migration0024Payouts },
  { name: "0025-dunning-settings-and-fallback", class: Migration0025DunningSettingsAndFallback },
  { name: "0026-pricing-and-receipts", class: Migration0026PricingAndReceipts },
  { name: "0027-order-refunds", class: Migration0027OrderRefunds },
  { name: "0028-dashboard-members", class: Migration0028DashboardMembers },
  { name: "0029-customer-emails", class: Migration0029CustomerEmails },
  { name: "0030-payout-indexes", class: Migration0030PayoutIndexes },
  { name: "0031-audit-log", class: Migration0031AuditLog },
  { name: "0032-monthly-partitions", class: Migration0032MonthlyPartitions },
  { name: "0033-dashboard-lookups", class: Migration0033DashboardLookups },
  { name: "0034-api-key-last-use", class: Migration0034ApiKeyLastUse },
  { name: "0035-announced-charges-index", class: Migration0035AnnouncedChargesIndex },
  { name: "0036-create-idempotency-key", class: Migration0036CreateIdempotencyKey },
  { name: "0037-reconciliation-runs", class: Migration0037ReconciliationRuns },
  { name: "0038-events-written-once", class: Migration0038EventsWrittenOnce },
  { name: "0039-merchant-feed-heads", class: Migration0039MerchantFeedHeads },
];
