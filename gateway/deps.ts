import type { Client } from "@connectrpc/connect";
import type { Config } from "../services/platform/config.ts";
import type { Logger } from "../services/platform/logger.ts";
import type { AuditService } from "../proto/gen/billing/audit/v1/audit_pb.ts";
import type { CatalogService } from "../proto/gen/billing/catalog/v1/catalog_pb.ts";
import type { MerchantService } from "../proto/gen/billing/merchants/v1/merchants_pb.ts";
import type { MembersService } from "../proto/gen/billing/merchants/v1/members_pb.ts";
import type { SandboxService } from "../proto/gen/billing/sandbox/v1/sandbox_pb.ts";
import type { WalletService } from "../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { SubscriptionsService } from "../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import type { RefundsService } from "../proto/gen/billing/subscriptions/v1/refunds_pb.ts";
import type { PricingService } from "../proto/gen/billing/subscriptions/v1/pricing_pb.ts";
import type { OrdersService } from "../proto/gen/billing/orders/v1/orders_pb.ts";
import type { EventsService } from "../proto/gen/billing/events/v1/events_pb.ts";
import type { PayoutsService } from "../proto/gen/billing/payouts/v1/payouts_pb.ts";
import type { RateLimiter } from "./rate-limit/rate-limit.ts";

/** The Connect clients the gateway translates REST calls into. */
export interface GatewayClients {
  merchants: Client<typeof MerchantService>;
  /** Served by the merchants service. */
  members: Client<typeof MembersService>;
  catalog: Client<typeof CatalogService>;
  sandbox: Client<typeof SandboxService>;
  wallet: Client<typeof WalletService>;
  subscriptions: Client<typeof SubscriptionsService>;
  /** Served by the subscriptions service. */
  refunds: Client<typeof RefundsService>;
  /** Coupons, promotion codes, discounts, charges and receipts: served by the subscriptions service. */
  pricing: Client<typeof PricingService>;
  orders: Client<typeof OrdersService>;
  events: Client<typeof EventsService>;
  payouts: Client<typeof PayoutsService>;
  /** The audit log: served by the merchants service. */
  audit: Client<typeof AuditService>;
}

export interface GatewayDeps {
  config: Config;
  logger: Logger;
  clients: GatewayClients;
  /** Checks that the gateway's dependencies answer; throws with a reason when not. */
  readiness: () => Promise<Record<string, "ok" | string>>;
  /** Per-merchant limits on /api/v1 (absent: no limit, e.g. in unit tests of the app). */
  rateLimiter?: RateLimiter;
}
