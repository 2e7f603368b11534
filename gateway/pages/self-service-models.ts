import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { CustomerSubscription, FundingOption, SubscriptionCharge } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { amountText, cancellationText, chargeStatusText, every, formatUtc, subscriptionStatusText } from "./page-text.ts";
import type { AssetChoiceModel, ChargeRowModel, SubscriptionCardModel } from "./views.ts";

/**
 * One card of the customer's self-service page, in words a customer reads:
 * statuses and reasons as sentences (the codes stay in data-status for
 * automation), and every amount by one rule (page-text.ts).
 */
export function cardModel(
  item: CustomerSubscription,
  screen: { error?: string | undefined; errorFor?: string | undefined; selected?: { subscriptionId: string; asset: string } | undefined },
): SubscriptionCardModel {
  const sub = item.subscription!;
  const plan = item.plan!;
  const lines: { label: string; value: string }[] = [{ label: "Paid with", value: sub.fundingAsset ?? "—" }];
  if (sub.status === "TRIALING") lines.push({ label: "Trial ends", value: date(sub.trialEnd) });
  else if (sub.nextBillingAt) lines.push({ label: "Next charge", value: date(sub.nextBillingAt) });
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
  };
}

const date = (t: Timestamp | undefined) => (t ? formatUtc(timestampDate(t)) : "—");

function chargeRow(c: SubscriptionCharge): ChargeRowModel {
  return {
    status: c.status,
    date: date(c.createdAt),
    amount: amountText(c.amount, c.currency),
    paid: c.assetAmount !== undefined ? amountText(c.assetAmount, c.asset) : c.asset,
    statusText: chargeStatusText(c.status, c.failureReason),
    refunded: refunded(c),
  };
}

const isZero = (value: string) => /^0*(\.0*)?$/.test(value);

/** Refunds of a charge: "—" when none, else the amount back in the plan's currency and in the asset. */
function refunded(c: SubscriptionCharge): string {
  if (isZero(c.amountRefunded)) return "—";
  const inAsset = c.assetAmountRefunded && !isZero(c.assetAmountRefunded) ? ` (${amountText(c.assetAmountRefunded, c.asset)})` : "";
  return `${amountText(c.amountRefunded, c.currency)}${inAsset}`;
}

function choice(subscriptionId: string, o: FundingOption, checked: boolean): AssetChoiceModel {
  return {
    asset: o.asset,
    name: o.name,
    network: o.network,
    balance: `Balance: ${amountText(o.balance, o.asset)}`,
    due: `${amountText(o.amountDue, o.asset)} per charge`,
    checked,
    disabled: false,
    note: o.frozen ? "frozen" : !o.sufficient ? "balance below one charge" : undefined,
    key: `${subscriptionId}-${o.asset}`,
  };
}
