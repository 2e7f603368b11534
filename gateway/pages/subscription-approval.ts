import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import {
  ApprovalOutcome,
  type GetAuthorizationResponse,
  type SubscriptionsService,
} from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { type ApprovalProvider, type ApprovalState, type ApprovalView, toFundingChoice } from "./approval-provider.ts";

const STATE: Record<string, ApprovalState> = { PENDING: "PENDING", EXPIRED: "EXPIRED", APPROVED: "USED", DECLINED: "USED", CANCELLED: "CANCELLED" };

const UNIT: Record<string, [string, string]> = { DAY: ["day", "days"], WEEK: ["week", "weeks"], MONTH: ["month", "months"], YEAR: ["year", "years"] };

/** "month", "3 months". */
export function every(interval: string, count: number): string {
  const [one, many] = UNIT[interval] ?? [interval.toLowerCase(), interval.toLowerCase()];
  return count === 1 ? one : `${count} ${many}`;
}

const FIAT = new Set(["USD", "EUR", "GBP"]);

/** For people: fiat amounts with cents ("10.5 USD" → "10.50 USD"); crypto amounts as they are. */
export function money(amount: string, currency: string): string {
  if (!FIAT.has(currency)) return `${amount} ${currency}`;
  const [whole, fraction = ""] = amount.split(".");
  return `${whole}.${fraction.padEnd(2, "0")} ${currency}`;
}

/** successUrl / cancelUrl (stored on the subscription) with subscriptionId and status added to the query. */
export function withResult(target: string, subscriptionId: string, status: string): string {
  const url = new URL(target);
  url.searchParams.set("subscriptionId", subscriptionId);
  url.searchParams.set("status", status);
  return url.toString();
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

function toView(res: GetAuthorizationResponse): ApprovalView {
  const plan = res.plan!;
  const period = every(plan.interval, plan.intervalCount);
  const lines = [
    { label: "Plan", value: plan.name },
    { label: "Billed", value: `every ${period}` },
  ];
  const price = money(plan.amount, plan.currency);
  let note = `You authorize ${res.merchantName} to charge ${price} every ${period} from the asset you choose, until you or the merchant cancel.`;
  if (plan.trialDays > 0) {
    lines.push({ label: "Free trial", value: `${plan.trialDays} ${plan.trialDays === 1 ? "day" : "days"}` });
    lines.push({ label: "Due today", value: money("0", plan.currency) });
    note = `Nothing is charged today. After the ${plan.trialDays}-day trial, ${price} is charged every ${period}.`;
  } else {
    lines.push({ label: "Due today", value: price });
  }
  if (plan.maximumChargeAmount !== undefined) lines.push({ label: "Maximum per charge", value: money(plan.maximumChargeAmount, plan.currency) });
  if (plan.description) lines.push({ label: "Details", value: plan.description });
  return {
    state: STATE[res.status] ?? "USED",
    walletUserId: res.walletUserId,
    expiresAt: timestampDate(res.expiresAt!),
    redirectOrigins: [originOf(res.successUrl), originOf(res.cancelUrl)].filter((o): o is string => o !== undefined),
    summary: {
      title: `Subscribe to ${plan.name}`,
      merchantName: res.merchantName,
      price: `${price} / ${period}`,
      lines,
      note,
      approveLabel: plan.trialDays > 0 ? "Start free trial" : `Subscribe and pay ${price}`,
    },
  };
}

const OUTCOME_REASON: Partial<Record<ApprovalOutcome, string>> = {
  [ApprovalOutcome.INSUFFICIENT_FUNDS]: "INSUFFICIENT_FUNDS",
  [ApprovalOutcome.ACCOUNT_FROZEN]: "ACCOUNT_FROZEN",
  [ApprovalOutcome.MAXIMUM_CHARGE_EXCEEDED]: "MAXIMUM_CHARGE_EXCEEDED",
};

/** The subscription authorization as an approval: the hosted page at /authorize/<token>. */
export function subscriptionApproval(client: Client<typeof SubscriptionsService>): ApprovalProvider {
  return {
    async load(token) {
      try {
        return toView(await client.getAuthorization({ token }));
      } catch (err) {
        if (err instanceof ConnectError && err.code === Code.NotFound) return undefined;
        throw err;
      }
    },
    async fundingChoices(token, walletUserId) {
      const { options } = await client.listFundingOptions({ token, walletUserId });
      return options.map(toFundingChoice);
    },
    async approve(token, walletUserId, fundingAsset) {
      const res = await client.approveAuthorization({ token, walletUserId, fundingAsset });
      if (res.outcome === ApprovalOutcome.APPROVED) {
        const sub = res.subscription!;
        return { approved: true, redirectUrl: withResult(sub.successUrl, sub.id, sub.status) };
      }
      return { approved: false, reason: OUTCOME_REASON[res.outcome] ?? "REFUSED", message: res.message };
    },
    async decline(token) {
      const { subscription } = await client.declineAuthorization({ token });
      return { redirectUrl: withResult(subscription!.cancelUrl, subscription!.id, subscription!.status) };
    },
  };
}
