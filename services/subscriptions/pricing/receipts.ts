import type { UseCaseContext } from "../../platform/use-case.ts";
import { conflict, invalid, notFound } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { formatAmount } from "../../platform/money.ts";
import { iso, isoOrNull } from "../../platform/timestamps.ts";
import { SubscriptionCharge, type ChargeRow } from "../entities.ts";
import { SubscriptionRefund } from "../refunds/refund-entities.ts";
import { fetchMerchantName, fetchPlan, planInterval, type SubscriptionPorts } from "../ports.ts";
import { defaultReceiptPrefix } from "../charges/receipt-number.ts";
import { lockReceiptCounter, setReceiptCounterPrefix } from "../charges/receipt-store.ts";
import { planIdOf } from "../subscription-store.ts";

const chargeNotFound = (id: string) => notFound("CHARGE_NOT_FOUND", `charge ${id} not found`);
const receiptNotFound = () => notFound("RECEIPT_NOT_FOUND", "no receipt here: only a succeeded charge above 0 has one");

/** GET /api/v1/charges/{id}: one charge of the merchant (another merchant's is not found, like a missing one). */
export async function getCharge(ctx: UseCaseContext, merchantId: string, id: string): Promise<ChargeRow> {
  const charge = isUuid(id) ? await ctx.em.findOne(SubscriptionCharge, { id: id.toLowerCase(), merchantId }) : null;
  if (!charge) throw chargeNotFound(id);
  return charge;
}

/** A receipt token is 24 random bytes, base64url (32 characters). */
const TOKEN = /^[A-Za-z0-9_-]{32}$/;

/**
 * What a receipt shows (the PDF now, the page later): the merchant, the
 * number, the date, plan and period, subtotal, discount, credit, amount in the
 * plan's currency, the asset amount, the rate and its time, the ledger
 * transaction, and each refund with its date. By the merchant's charge id, or
 * by the customer's unguessable token (no login).
 */
export async function getReceipt(ctx: UseCaseContext, ports: SubscriptionPorts, by: { merchantId: string; chargeId: string } | { token: string }) {
  let charge: ChargeRow | null;
  if ("token" in by) {
    charge = TOKEN.test(by.token) ? await ctx.em.findOne(SubscriptionCharge, { receiptToken: by.token }) : null;
    if (!charge) throw receiptNotFound();
  } else {
    charge = await getCharge(ctx, by.merchantId, by.chargeId);
    if (!charge.receiptNumber) throw receiptNotFound();
  }
  const [merchantName, plan, refunds] = await Promise.all([
    fetchMerchantName(ports, charge.merchantId),
    fetchPlan(ports, charge.merchantId, await planIdOf(ctx.em.fork(), charge.subscriptionId)).catch(() => null),
    ctx.em.fork().find(SubscriptionRefund, { chargeId: charge.id, status: "SUCCEEDED" }, { orderBy: { createdAt: "asc", id: "asc" } }),
  ]);
  return {
    object: "receipt" as const,
    receiptNumber: charge.receiptNumber!,
    receiptUrl: charge.receiptUrl ?? null,
    date: iso(charge.settledAt ?? charge.createdAt),
    merchant: { id: charge.merchantId, name: merchantName },
    chargeId: charge.id,
    subscriptionId: charge.subscriptionId,
    purpose: charge.purpose,
    // The subscription's plan as it is now (a plan change's charge was for the plan it changed to).
    plan: plan ? { id: plan.id, name: plan.name, interval: planInterval(plan), intervalCount: plan.intervalCount } : null,
    periodStart: iso(charge.periodStart),
    periodEnd: iso(charge.periodEnd),
    currency: charge.currency,
    subtotal: formatAmount(charge.subtotal ?? charge.amount),
    discountAmount: formatAmount(charge.discountAmount ?? "0"),
    creditApplied: formatAmount(charge.creditApplied ?? "0"),
    amount: formatAmount(charge.amount),
    asset: charge.asset,
    assetAmount: formatAmount(charge.assetAmount ?? "0"),
    rate: charge.rate == null ? null : formatAmount(charge.rate),
    rateAt: isoOrNull(charge.rateAt),
    walletTransactionId: charge.walletTransactionId ?? null,
    refunds: refunds.map((r) => ({
      id: r.id,
      amount: formatAmount(r.amount),
      assetAmount: formatAmount(r.assetAmount),
      date: iso(r.settledAt ?? r.createdAt),
    })),
    amountRefunded: formatAmount(charge.amountRefunded ?? "0"),
    assetAmountRefunded: formatAmount(charge.assetAmountRefunded ?? "0"),
  };
}

const RECEIPT_PREFIX_PATTERN = /^[A-Z0-9][A-Z0-9-]{0,19}$/;

/**
 * The operator sets a merchant's receipt prefix, only before its first
 * receipt (numbers already issued keep their prefix: 409 RECEIPT_PREFIX_LOCKED
 * afterwards). Same value again: 200, idempotent.
 */
export async function setReceiptPrefix(ctx: UseCaseContext, merchantId: string, prefix: string): Promise<string> {
  if (!RECEIPT_PREFIX_PATTERN.test(prefix))
    throw invalid("INVALID_REQUEST", "receiptPrefix: must be 1 to 20 of A-Z, 0-9 and -, starting with a letter or digit");
  return ctx.em.fork().transactional(async (em) => {
    const counter = await lockReceiptCounter(em, merchantId, defaultReceiptPrefix(merchantId));
    if (counter.prefix === prefix) return prefix;
    if (counter.lastNumber !== "0")
      throw conflict(
        "RECEIPT_PREFIX_LOCKED",
        `receiptPrefix: receipts were already numbered with ${counter.prefix}; the prefix can only be set before the first receipt`,
      );
    await setReceiptCounterPrefix(em, merchantId, prefix);
    return prefix;
  });
}
