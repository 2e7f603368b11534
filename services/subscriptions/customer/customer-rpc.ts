import type { ServiceImpl } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useCaseContext } from "../../platform/rpc/use-case-context.ts";
import { formatAmount } from "../../platform/money.ts";
import { chargeRecord, subscriptionRecord } from "../subscription-record.ts";
import type { AuthorizationRow, SubscriptionRow } from "../entities.ts";
import type { SubscriptionPorts } from "../ports.ts";
import type { FundingOption } from "../list-funding-options.ts";
import { chargeMessage, planSummary, subscriptionMessage } from "../subscription-messages.ts";
import { listCustomerSubscriptions } from "./list-customer-subscriptions.ts";
import { cancelSubscriptionForCustomer } from "./cancel-subscription-for-customer.ts";
import { changeFundingAsset } from "./change-funding-asset.ts";
import { setFundingFallback } from "./set-funding-fallback.ts";

const fundingOptionMessage = (o: FundingOption) => ({
  ...o,
  balance: formatAmount(o.balance),
  amountDue: formatAmount(o.amountDue),
  rate: formatAmount(o.rate),
});

const toMessage = (s: { subscription: SubscriptionRow; authorization: AuthorizationRow | null }) =>
  subscriptionMessage(s.subscription.merchantId, subscriptionRecord(s.subscription, s.authorization));

type CustomerMethods = Pick<
  ServiceImpl<typeof SubscriptionsService>,
  "listCustomerSubscriptions" | "cancelSubscriptionForCustomer" | "changeFundingAsset" | "setFundingFallback"
>;

/** The customer's RPCs (wallet app, self-service page): keyed by wallet user id, never by merchant. */
export function customerMethods(ports: () => SubscriptionPorts): CustomerMethods {
  return {
    async listCustomerSubscriptions(req, call) {
      const page = await listCustomerSubscriptions(useCaseContext(call), ports(), { walletUserId: req.walletUserId, limit: req.limit, cursor: req.cursor });
      return {
        subscriptions: page.items.map((item) => ({
          subscription: toMessage(item),
          merchantName: item.merchantName,
          plan: planSummary(item.plan),
          charges: item.charges.map((c) => chargeMessage(chargeRecord(c))),
          fundingOptions: item.fundingOptions.map(fundingOptionMessage),
          live: item.live,
          atRisk: item.atRisk,
          shortfall: item.shortfall ?? undefined,
        })),
        hasMore: page.hasMore,
        nextCursor: page.nextCursor,
      };
    },
    async cancelSubscriptionForCustomer(req, call) {
      return { subscription: toMessage(await cancelSubscriptionForCustomer(useCaseContext(call), ports(), req.walletUserId, req.subscriptionId)) };
    },
    async changeFundingAsset(req, call) {
      const result = await changeFundingAsset(useCaseContext(call), ports(), {
        walletUserId: req.walletUserId,
        subscriptionId: req.subscriptionId,
        asset: req.asset,
      });
      return { subscription: toMessage(result), retried: result.retried };
    },
    async setFundingFallback(req, call) {
      return {
        subscription: toMessage(
          await setFundingFallback(useCaseContext(call), ports(), { walletUserId: req.walletUserId, subscriptionId: req.subscriptionId, assets: req.assets }),
        ),
      };
    },
  };
}
