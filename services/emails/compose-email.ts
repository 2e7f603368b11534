import { formatForPeople } from "../platform/money.ts";
import type { EmailKind } from "./contract.ts";
import type { EmailModel, EmailViews, RenderedEmail } from "./email-views.ts";

/** What an email needs beside its event's data: names, the subscription as it stands, links. */
interface EmailContext {
  merchantName: string;
  planName: string;
  /** The customer's self-service page ({PUBLIC_BASE_URL}/wallet/subscriptions). */
  selfServiceUrl: string;
  /** The subscription now (for a failure: its next retry, or that retries ended). */
  subscription: { status: string; nextRetryAt: Date | null };
}

const money = (amount: string | null | undefined, code: string | null | undefined) => {
  if (amount == null || !code) return "—";
  try {
    return `${formatForPeople(amount)} ${code}`;
  } catch {
    return `${amount} ${code}`;
  }
};
const when = (iso: string | Date | null | undefined) => (iso ? `${new Date(iso).toISOString().slice(0, 16).replace("T", " ")} UTC` : "—");
const day = (iso: string | Date) => new Date(iso).toISOString().slice(0, 10);

const FAILURE = new Map<string, string>([
  ["INSUFFICIENT_FUNDS", "your balance was too low"],
  ["ACCOUNT_FROZEN", "your account is frozen"],
  ["MAXIMUM_CHARGE_EXCEEDED", "the amount is above the maximum per charge you authorized"],
  ["CONVERSION_UNAVAILABLE", "no exchange rate was available for your asset"],
]);

/**
 * One email from one event, rendered (email-views.ts). The event's data is
 * what the merchant's webhook got (the charge record, the notice, the
 * at-risk record); the words are for the customer.
 */
export function composeEmail(views: EmailViews, kind: EmailKind, data: any, c: EmailContext): RenderedEmail {
  const manage = { text: "Manage your subscriptions", url: c.selfServiceUrl };
  let subject: string;
  let model: EmailModel;
  switch (kind) {
    case "upcoming_charge":
      subject = `${c.merchantName}: ${c.planName} renews on ${day(data.date)}`;
      model = {
        merchantName: c.merchantName,
        planName: c.planName,
        lead: `${c.merchantName} will charge your subscription to ${c.planName} on ${when(data.date)}.`,
        lines: [
          { label: "Amount", value: money(data.amount, data.currency) },
          ...(data.discountAmount && data.discountAmount !== "0" ? [{ label: "Discount", value: money(data.discountAmount, data.currency) }] : []),
          { label: "Paid from", value: data.assetAmount ? `${money(data.assetAmount, data.asset)} (at today's rate)` : (data.asset ?? "—") },
        ],
        action: manage,
      };
      break;
    case "charge_at_risk":
      subject = `${c.merchantName}: your payment for ${c.planName} on ${day(data.date)} may fail`;
      model = {
        merchantName: c.merchantName,
        planName: c.planName,
        lead: `Your ${data.asset} balance does not cover the charge on ${when(data.date)}, and no fallback asset covers it either. Add funds or choose another asset before then.`,
        lines: [
          { label: "Amount", value: money(data.amount, data.currency) },
          { label: "Needed", value: money(data.assetAmount, data.asset) },
          { label: "Short by", value: money(data.shortfall, data.asset) },
        ],
        action: { text: "Add a fallback or change the asset", url: c.selfServiceUrl },
      };
      break;
    case "payment_failed": {
      const charge = data.charge ?? {};
      const reason = FAILURE.get(charge.failureReason) ?? "the payment was refused";
      const retry = c.subscription.status === "PAST_DUE" && c.subscription.nextRetryAt ? when(c.subscription.nextRetryAt) : undefined;
      subject = `${c.merchantName}: payment for ${c.planName} failed`;
      model = {
        merchantName: c.merchantName,
        planName: c.planName,
        lead: retry
          ? `We could not charge ${money(charge.amount, charge.currency)} for ${c.planName}: ${reason}. We will try again on ${retry}.`
          : `We could not charge ${money(charge.amount, charge.currency)} for ${c.planName}: ${reason}. No more tries are scheduled.`,
        lines: [
          { label: "Amount", value: money(charge.amount, charge.currency) },
          { label: "Asset", value: charge.asset ?? "—" },
          { label: "Next retry", value: retry ?? "None" },
        ],
        action: manage,
      };
      break;
    }
    case "receipt": {
      const charge = data.charge ?? {};
      subject = `${c.merchantName}: receipt ${charge.receiptNumber} for ${c.planName}`;
      model = {
        merchantName: c.merchantName,
        planName: c.planName,
        lead: `Thank you. ${c.merchantName} received your payment for ${c.planName}.`,
        lines: [
          { label: "Receipt number", value: charge.receiptNumber ?? "—" },
          { label: "Amount paid", value: money(charge.amount, charge.currency) },
          { label: "Paid in", value: money(charge.assetAmount, charge.asset) },
          { label: "Period", value: charge.periodStart && charge.periodEnd ? `${day(charge.periodStart)} to ${day(charge.periodEnd)}` : "—" },
        ],
        action: { text: "View your receipt", url: charge.receiptUrl },
        extraLink: { text: "Download it as a PDF", url: `${charge.receiptUrl}.pdf` },
      };
      break;
    }
  }
  return views.render(kind, subject, model);
}
