import type { ConnectRouter } from "@connectrpc/connect";
import type { ServiceName } from "./platform/config.ts";
import { contextFor, type ServiceDeps } from "./platform/service-deps.ts";
import { CatalogService } from "../proto/gen/billing/catalog/v1/catalog_pb.ts";
import { MerchantService } from "../proto/gen/billing/merchants/v1/merchants_pb.ts";
import { catalogService } from "./catalog/rpc.ts";
import { merchantService } from "./merchants/rpc.ts";
import { MembersService } from "../proto/gen/billing/merchants/v1/members_pb.ts";
import { membersService } from "./merchants/members/rpc.ts";
import { SandboxService } from "../proto/gen/billing/sandbox/v1/sandbox_pb.ts";
import { sandboxService } from "./sandbox/rpc.ts";
import { ALL_SWEEPS } from "./job-kinds.ts";
import { ensureRetainedMonths } from "./retention/sweep-retention.ts";
import { WalletService } from "../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { walletService } from "./wallet/rpc.ts";
import { enqueueAccountCredited } from "./subscriptions/renewals/renewal-queue.ts";
import { SubscriptionsService } from "../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { subscriptionsService } from "./subscriptions/rpc.ts";
import { RefundsService } from "../proto/gen/billing/subscriptions/v1/refunds_pb.ts";
import { refundsService } from "./subscriptions/refunds/refund-rpc.ts";
import { PricingService } from "../proto/gen/billing/subscriptions/v1/pricing_pb.ts";
import { pricingService } from "./subscriptions/pricing/pricing-rpc.ts";
import { EventsService } from "../proto/gen/billing/events/v1/events_pb.ts";
import { eventsService } from "./events/rpc.ts";
import { OrdersService } from "../proto/gen/billing/orders/v1/orders_pb.ts";
import { ordersService } from "./orders/rpc.ts";
import { PayoutsService } from "../proto/gen/billing/payouts/v1/payouts_pb.ts";
import { payoutsService } from "./payouts/rpc.ts";
import { AuditService } from "../proto/gen/billing/audit/v1/audit_pb.ts";
import { auditService } from "./audit/rpc.ts";

/** The one place that says which Connect service each service name serves. */
const REGISTRATIONS: Partial<Record<ServiceName, (router: ConnectRouter, deps: ServiceDeps) => void>> = {
  merchants: (router, deps) =>
    router.service(MerchantService, merchantService(deps)).service(MembersService, membersService(deps)).service(AuditService, auditService()),
  catalog: (router, deps) => router.service(CatalogService, catalogService()),
  // A clock advance makes the retained tables' months of the new time before the new time is committed, so nothing
  // writes in a month while it is made; a month lock contention left is counted as the retention sweep counts its own.
  sandbox: (router, deps) =>
    router.service(
      SandboxService,
      sandboxService(deps, ALL_SWEEPS, async (target) => {
        for (const t of await ensureRetainedMonths(contextFor(deps), deps.logger, target))
          deps.metrics?.retentionContention.inc({ table: t.table }, t.contended.length);
      }),
    ),
  // Recurring billing hears of the wallet's credits here; neither domain imports the other.
  wallet: (router, deps) => router.service(WalletService, walletService(deps, { accountCredited: (credit) => enqueueAccountCredited(deps.queues, credit) })),
  subscriptions: (router, deps) =>
    router
      .service(SubscriptionsService, subscriptionsService(deps))
      .service(RefundsService, refundsService(deps))
      .service(PricingService, pricingService(deps)),
  events: (router, deps) => router.service(EventsService, eventsService(deps)),
  orders: (router, deps) => router.service(OrdersService, ordersService(deps)),
  payouts: (router, deps) => router.service(PayoutsService, payoutsService(deps)),
};

export function serviceRoutes(deps: ServiceDeps, names: readonly ServiceName[]) {
  return (router: ConnectRouter) => {
    for (const name of names) REGISTRATIONS[name]?.(router, deps);
  };
}
