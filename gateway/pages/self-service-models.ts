import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { CustomerSubscription, FundingOption, SubscriptionCharge } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { amountText, cancellationText, chargeStatusText, every, formatUtc, subscriptionStatusText } from "./page-text.ts";
import { fallbackSelects } from "./fallback-choice.ts";
import type { AssetChoiceModel, ChargeRowModel, SubscriptionCardModel } from "./views.ts";

/**
 * One card of the customer's self-service page, in words a customer reads:
 * statuses and reasons as sentences (the codes stay in data-status for
 * automation), every amount by one rule (page-text.ts), and "Paid with"
 * from what the charges were actually paid in, not from the asset that
 * would pay the next one ("Pays with", live subscriptions only).
 */
export function cardModel(
  item: CustomerSubscription,
  screen: {
    error?: string | undefined;
    errorFor?: string | undefined;
    selected?: { subscriptionId: string; asset: string } | undefined;
    fallbacks?: { subscriptionId: string; assets: string[] } | undefined;
  },
): SubscriptionCardModel {
  const sub = item.subscription!;
  const plan = item.plan!;
  const lines: { label: string; value: string }[] = [];
  if (item.live && sub.fundingAsset) lines.push({ label: "Pays with", value: sub.fundingAsset });
  if (!item.live) lines.push({ label: "Paid with", value: paidWith(item.charges) });
  if (sub.status === "TRIALING") lines.push({ label: "Trial ends", value: date(sub.trialEnd) });
  else if (item.live && sub.nextBillingAt) lines.push({ label: "Next charge", value: date(sub.nextBillingAt) });
  if (sub.status === "PAST_DUE" && sub.nextRetryAt) lines.push({ label: "Next retry", value: date(sub.nextRetryAt) });
  if (plan.maximumChargeAmount !== undefined) lines.push({ label: "Maximum per charge", value: amountText(plan.maximumChargeAmount, plan.currency) });
  lines.push({ label: "Since", value: date(sub.createdAt) });
  if (sub.cancelledAt) {
    const why = sub.cancellationReason ? cancellationText(sub.cancellationReason, item.merchantName) : undefined;
    lines.push({ label: "Cancelled", value: why ? `${date(sub.cancelledAt)}, ${why}` : date(sub.cancelledAt) });
  }
  if (sub.expiredAt) lines.push({ label: "Expired", value: date(sub.expiredAt) });
  const picked = screen.selected?.subscriptionId === sub.id ? screen.selected.asset : sub.fundingAsset;
  return {
    id: sub.id,
    status: sub.status,
    statusText: subscriptionStatusText(sub.status),
    tone: !item.live ? "ended" : sub.status === "PAST_DUE" || sub.status === "UNPAID" ? "warn" : "live",
    live: item.live,
    merchantName: item.merchantName,
    planName: plan.name,
    price: `${amountText(plan.amount, plan.currency)} / ${every(plan.interval, plan.intervalCount)}`,
    lines,
    charges: item.charges.map(chargeRow),
    error: screen.error !== undefined && screen.errorFor === sub.id ? screen.error : undefined,
    choices: item.live ? item.fundingOptions.map((o) => choice(sub.id, o, o.asset === picked)) : [],
    fallbacks: item.live
      ? fallbackSelects(
          // Any account that can pay and is not frozen, except the one that pays now.
          item.fundingOptions.filter((o) => !o.frozen && o.asset !== sub.fundingAsset),
          screen.fallbacks?.subscriptionId === sub.id ? screen.fallbacks.assets : sub.fallbackAssets,
          sub.id,
        )
      : [],
    atRisk: item.live && item.atRisk ? atRiskSentence(item) : undefined,
  };
}

/** The at-risk warning (issue 26): when, how much is missing and in what, and what the customer can do. */
function atRiskSentence(item: CustomerSubscription): string {
  const sub = item.subscription!;
  const when = sub.nextRetryAt ?? sub.nextBillingAt;
  const short = item.shortfall && sub.fundingAsset ? `${amountText(item.shortfall, sub.fundingAsset)} short` : "short";
  return `Your next charge${when ? ` on ${date(when)}` : ""} may fail: your ${sub.fundingAsset ?? ""} balance is ${short}, and no fallback covers it. Add funds, or choose another asset or a fallback below.`;
}

const date = (t: Timestamp | undefined) => (t ? formatUtc(timestampDate(t)) : "—");
const isZero = (value: string) => /^0*(\.0*)?$/.test(value);

/** The assets the subscription's charges were paid in, latest first ("Nothing was charged" when none succeeded). */
function paidWith(charges: SubscriptionCharge[]): string {
  const assets = [...new Set(charges.filter((c) => c.status === "SUCCEEDED").map((c) => c.asset))];
  return assets.length ? assets.join(", ") : "Nothing was charged";
}

function chargeRow(c: SubscriptionCharge): ChargeRowModel {
  return {
    status: c.status,
    date: date(c.createdAt),
    amount: amountText(c.amount, c.currency),
    paid: c.assetAmount !== undefined ? amountText(c.assetAmount, c.asset) : c.asset,
    statusText: chargeStatusText(c.status, c.failureReason),
    refunded: refunded(c),
    receiptUrl: c.receiptUrl,
  };
}

/** Refunds of a charge: "—" when none, else the amount back in the plan's currency and in the asset. */
function refunded(c: SubscriptionCharge): string {
  if (isZero(c.amountRefunded)) return "—";
  const inAsset = c.assetAmountRefunded && !isZero(c.assetAmountRefunded) ? ` (${amountText(c.assetAmountRefunded, c.asset)})` : "";
  return `${amountText(c.amountRefunded, c.currency)}${inAsset}`;
}

/**
 * A frozen account is refused by the service, so it cannot be chosen. A balance below one charge
 * may still be chosen (the customer may top it up before the next charge; docs/hosted-pages.md, self-service),
 * with that said beside it.
 */
function choice(subscriptionId: string, o: FundingOption, checked: boolean): AssetChoiceModel {
  return {
    asset: o.asset,
    name: o.name,
    network: o.network,
    balance: `Balance: ${amountText(o.balance, o.asset)}`,
    due: `${amountText(o.amountDue, o.asset)} per charge`,
    checked: checked && !o.frozen,
    disabled: o.frozen,
    note: o.frozen ? "This account is frozen, so it cannot pay." : !o.sufficient ? "Balance below one charge: add funds before the next charge." : undefined,
    key: `${subscriptionId}-${o.asset}`,
  };
}
