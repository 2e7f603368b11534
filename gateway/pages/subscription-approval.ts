import type { Client } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import {
  ApprovalOutcome,
  type DiscountTerms,
  type GetAuthorizationResponse,
  type SubscriptionsService,
} from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { approvalProvider, redirectOrigins, withResult, type ApprovalProvider, type ApprovalState, type ApprovalView } from "./approval-provider.ts";
import { amountText, every } from "./page-text.ts";

const STATE: Record<string, ApprovalState> = { PENDING: "PENDING", EXPIRED: "EXPIRED", APPROVED: "USED", DECLINED: "USED", CANCELLED: "CANCELLED" };

function toView(res: GetAuthorizationResponse): ApprovalView {
  const plan = res.plan!;
  const period = every(plan.interval, plan.intervalCount);
  const lines = [
    { label: "Plan", value: plan.name },
    { label: "Billed", value: `every ${period}` },
  ];
  const price = amountText(plan.amount, plan.currency);
  const terms = discountTerms(res.discount, plan.currency, price, period);
  // What the first charge costs: the discounted amount when a discount applies.
  const first = terms ? amountText(terms.amount, plan.currency) : price;
  if (terms) lines.push(...terms.lines);
  let note = terms
    ? `You authorize ${res.merchantName} to charge ${terms.sentence}, from the asset you choose, until you or the merchant cancel.`
    : `You authorize ${res.merchantName} to charge ${price} every ${period} from the asset you choose, until you or the merchant cancel.`;
  if (plan.trialDays > 0) {
    lines.push({ label: "Free trial", value: `${plan.trialDays} ${plan.trialDays === 1 ? "day" : "days"}` });
    lines.push({ label: "Due today", value: amountText("0", plan.currency) });
    note = terms
      ? `Nothing is charged today. After the ${plan.trialDays}-day trial, you are charged ${terms.sentence}.`
      : `Nothing is charged today. After the ${plan.trialDays}-day trial, ${price} is charged every ${period}.`;
  } else {
    lines.push({ label: "Due today", value: first });
  }
  if (plan.maximumChargeAmount !== undefined) lines.push({ label: "Maximum per charge", value: amountText(plan.maximumChargeAmount, plan.currency) });
  if (plan.description) lines.push({ label: "Details", value: plan.description });
  return {
    state: STATE[res.status] ?? "USED",
    walletUserId: res.walletUserId,
    expiresAt: timestampDate(res.expiresAt!),
    redirectOrigins: redirectOrigins(res.successUrl, res.cancelUrl),
    dueNow: plan.trialDays === 0,
    offersFallback: true,
    summary: {
      title: `Subscribe to ${plan.name}`,
      merchantName: res.merchantName,
      price: `${price} / ${period}`,
      lines,
      note,
      approveLabel: plan.trialDays > 0 ? "Start free trial" : `Subscribe and pay ${first}`,
    },
  };
}

/**
 * A discount in words the customer consents to (issue 25): what is taken off,
 * for how many charges, what each of those costs, and what is charged after.
 */
function discountTerms(discount: DiscountTerms | undefined, currency: string, price: string, period: string) {
  if (!discount) return undefined;
  const discounted = amountText(discount.amount, currency);
  const off = amountText(discount.discountAmount, currency);
  const many = discount.periods === undefined ? undefined : discount.periods === 1 ? "the first charge" : `the first ${discount.periods} charges`;
  const lines = [
    { label: "Price", value: `${price} / ${period}` },
    { label: "Discount", value: many ? `${off} off ${many}` : `${off} off every charge` },
    { label: many ? `For ${many}` : "Each charge", value: discounted },
  ];
  if (many) lines.push({ label: "After that", value: `${price} / ${period}` });
  const sentence = many ? `${discounted} for ${many}, then ${price} every ${period}` : `${discounted} every ${period}`;
  return { amount: discount.amount, lines, sentence };
}

const OUTCOME_REASON: Partial<Record<ApprovalOutcome, string>> = {
  [ApprovalOutcome.INSUFFICIENT_FUNDS]: "INSUFFICIENT_FUNDS",
  [ApprovalOutcome.ACCOUNT_FROZEN]: "ACCOUNT_FROZEN",
  [ApprovalOutcome.MAXIMUM_CHARGE_EXCEEDED]: "MAXIMUM_CHARGE_EXCEEDED",
};

/** The subscription's successUrl / cancelUrl with subscriptionId and status added. */
const resultUrl = (target: string, sub: { id: string; status: string }) => withResult(target, { subscriptionId: sub.id, status: sub.status });

/** The subscription authorization as an approval: the hosted page at /authorize/<token>. */
export function subscriptionApproval(client: Client<typeof SubscriptionsService>): ApprovalProvider {
  return approvalProvider({
    fetch: (token) => client.getAuthorization({ token }),
    view: toView,
    fundingOptions: (token, walletUserId) => client.listFundingOptions({ token, walletUserId }),
    async approve(token, walletUserId, fundingAsset, fallbackAssets) {
      const res = await client.approveAuthorization({ token, walletUserId, fundingAsset, fallbackAssets });
      if (res.outcome === ApprovalOutcome.APPROVED) return { approved: true, redirectUrl: resultUrl(res.subscription!.successUrl, res.subscription!) };
      return { approved: false, reason: OUTCOME_REASON[res.outcome] ?? "REFUSED", message: res.message };
    },
    async decline(token) {
      const { subscription } = await client.declineAuthorization({ token });
      return { redirectUrl: resultUrl(subscription!.cancelUrl, subscription!) };
    },
  });
}
