import type { ServiceImpl } from "@connectrpc/connect";
import { ApprovalOutcome, SubscriptionsService } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import type { ServiceDeps } from "../platform/service-deps.ts";
import { useCaseContext } from "../platform/rpc/use-case-context.ts";
import { parseMetadataJson } from "../platform/metadata.ts";
import { formatAmount } from "../platform/money.ts";
import { toTimestamp } from "../platform/timestamps.ts";
import type { AuthorizationRow, ChargeRow, SubscriptionRow } from "./entities.ts";
import { chargeRecord, subscriptionRecord } from "./subscription-record.ts";
import { chargeMessage, planSummary, subscriptionMessage } from "./subscription-messages.ts";
import { subscriptionPorts, type SubscriptionPorts } from "./ports.ts";
import { createSubscription } from "./create-subscription.ts";
import { getSubscription } from "./get-subscription.ts";
import { listSubscriptions } from "./list-subscriptions.ts";
import { pauseSubscription } from "./pause-subscription.ts";
import { resumeSubscription } from "./resume-subscription.ts";
import { cancelSubscription } from "./cancel-subscription.ts";
import { getAuthorization } from "./get-authorization.ts";
import { listFundingOptions } from "./list-funding-options.ts";
import { approveAuthorization, type ApprovalOutcome as Outcome } from "./approve-authorization.ts";
import { declineAuthorization } from "./decline-authorization.ts";
import { expireAuthorization, expireDueAuthorizations } from "./expire-authorization.ts";
import { listSubscriptionCharges } from "./list-subscription-charges.ts";
import { getMerchantOverview } from "./get-merchant-overview.ts";
import { changeSessionMethods } from "./change-sessions/change-session-rpc.ts";
import { customerMethods } from "./customer/customer-rpc.ts";
import { settingsMethods } from "./settings/settings-rpc.ts";
import { exportCharges } from "./export-charges.ts";
import { timestampDate } from "@bufbuild/protobuf/wkt";

const toMessage = (s: { subscription: SubscriptionRow; authorization: AuthorizationRow | null }) =>
  subscriptionMessage(s.subscription.merchantId, subscriptionRecord(s.subscription, s.authorization));

const OUTCOME_TO_PROTO: Record<Outcome, ApprovalOutcome> = {
  APPROVED: ApprovalOutcome.APPROVED,
  INSUFFICIENT_FUNDS: ApprovalOutcome.INSUFFICIENT_FUNDS,
  ACCOUNT_FROZEN: ApprovalOutcome.ACCOUNT_FROZEN,
  MAXIMUM_CHARGE_EXCEEDED: ApprovalOutcome.MAXIMUM_CHARGE_EXCEEDED,
};

export function subscriptionsService(deps: ServiceDeps): ServiceImpl<typeof SubscriptionsService> {
  // Built on first use and again if the config changes: in one process the
  // service URLs are final only once every local service listens.
  let cached: { config: ServiceDeps["config"]; ports: SubscriptionPorts } | undefined;
  const ports = () => {
    if (cached?.config !== deps.config) cached = { config: deps.config, ports: subscriptionPorts(deps) };
    return cached.ports;
  };
  return {
    ...changeSessionMethods(ports),
    ...customerMethods(ports),
    ...settingsMethods(ports),
    async exportCharges(req, call) {
      const batch = await exportCharges(useCaseContext(call), {
        merchantId: req.merchantId,
        from: req.from ? timestampDate(req.from) : undefined,
        to: req.to ? timestampDate(req.to) : undefined,
        after: req.after,
        limit: req.limit,
      });
      return {
        charges: batch.charges.map((c) => ({
          ...c,
          createdAt: toTimestamp(c.createdAt),
          settledAt: c.settledAt ? toTimestamp(c.settledAt) : undefined,
          failureReason: c.failureReason ?? undefined,
          assetAmount: c.assetAmount ?? undefined,
          rate: c.rate ?? undefined,
          receiptNumber: c.receiptNumber ?? undefined,
        })),
        next: batch.next,
      };
    },
    async createSubscription(req, call) {
      const created = await createSubscription(
        useCaseContext(call),
        ports(),
        {
          merchantId: req.merchantId,
          externalReference: req.externalReference,
          serviceReference: req.serviceReference,
          planId: req.planId,
          walletUserId: req.walletUserId,
          customerEmail: req.customerEmail,
          successUrl: req.successUrl,
          cancelUrl: req.cancelUrl,
          authorizationExpiresInMinutes: req.authorizationExpiresInMinutes,
          metadata: parseMetadataJson(req.metadataJson),
          couponId: req.couponId,
          promotionCode: req.promotionCode,
          idempotencyKey: req.idempotencyKey,
        },
        call.signal,
      );
      return {
        subscription: toMessage(created),
        authorizationUrl: created.authorizationUrl,
        authorizationExpiresAt: toTimestamp(created.authorization.expiresAt),
      };
    },
    async getSubscription(req, call) {
      return { subscription: toMessage(await getSubscription(useCaseContext(call), req.merchantId, req.id)) };
    },
    async listSubscriptions(req, call) {
      const page = await listSubscriptions(useCaseContext(call), {
        merchantId: req.merchantId,
        limit: req.limit,
        cursor: req.cursor,
        status: req.status,
        planId: req.planId,
        walletUserId: req.walletUserId,
        externalReference: req.externalReference,
        query: req.query,
      });
      return {
        subscriptions: page.items.map((s) => toMessage({ subscription: s, authorization: page.authorizations.get(s.id) ?? null })),
        hasMore: page.hasMore,
        nextCursor: page.nextCursor,
      };
    },
    async pauseSubscription(req, call) {
      return { subscription: toMessage(await pauseSubscription(useCaseContext(call), ports(), req.merchantId, req.id)) };
    },
    async resumeSubscription(req, call) {
      return { subscription: toMessage(await resumeSubscription(useCaseContext(call), ports(), req.merchantId, req.id)) };
    },
    async cancelSubscription(req, call) {
      return { subscription: toMessage(await cancelSubscription(useCaseContext(call), ports(), req.merchantId, req.id)) };
    },
    async getAuthorization(req, call) {
      const view = await getAuthorization(useCaseContext(call), ports(), req.token);
      return {
        authorizationId: view.authorization.id,
        status: view.status,
        expiresAt: toTimestamp(view.authorization.expiresAt),
        subscriptionId: view.subscription.id,
        subscriptionStatus: view.subscription.status,
        merchantId: view.subscription.merchantId,
        merchantName: view.merchantName,
        walletUserId: view.subscription.walletUserId,
        plan: planSummary(view.plan),
        successUrl: view.subscription.successUrl,
        cancelUrl: view.subscription.cancelUrl,
        discount: view.discount && { ...view.discount, periods: view.discount.periods ?? undefined },
      };
    },
    async listFundingOptions(req, call) {
      const options = await listFundingOptions(useCaseContext(call), ports(), { token: req.token, walletUserId: req.walletUserId });
      return {
        options: options.map((o) => ({ ...o, balance: formatAmount(o.balance), amountDue: formatAmount(o.amountDue), rate: formatAmount(o.rate) })),
      };
    },
    async approveAuthorization(req, call) {
      const result = await approveAuthorization(useCaseContext(call), ports(), {
        token: req.token,
        walletUserId: req.walletUserId,
        fundingAsset: req.fundingAsset,
        fallbackAssets: req.fallbackAssets,
      });
      return {
        outcome: OUTCOME_TO_PROTO[result.outcome],
        subscription: toMessage(result),
        message: result.message,
        charge: result.charge ? chargeMessage(chargeRecord(result.charge as ChargeRow)) : undefined,
      };
    },
    async declineAuthorization(req, call) {
      return { subscription: toMessage(await declineAuthorization(useCaseContext(call), req.token)) };
    },
    async expireAuthorizations(req, call) {
      await deps.clock.sync();
      if (req.subscriptionId !== undefined) {
        return { expired: (await expireAuthorization(useCaseContext(call), req.subscriptionId)) ? 1 : 0 };
      }
      return { expired: await expireDueAuthorizations(useCaseContext(call)) };
    },
    async listSubscriptionCharges(req, call) {
      const page = await listSubscriptionCharges(useCaseContext(call), {
        merchantId: req.merchantId,
        subscriptionId: req.subscriptionId,
        limit: req.limit,
        cursor: req.cursor,
        status: req.status,
      });
      return { charges: page.items.map((c) => chargeMessage(chargeRecord(c))), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    async getMerchantOverview(req, call) {
      const o = await getMerchantOverview(useCaseContext(call), ports(), { merchantId: req.merchantId, days: req.days });
      return { ...o, windowStart: toTimestamp(o.windowStart), windowEnd: toTimestamp(o.windowEnd) };
    },
  };
}
