import { conflict, invalid } from "../../platform/errors.ts";
import { amount, compare, convert, formatAmount, isZero, sub, type Amount } from "../../platform/money.ts";
import { REFUND_ERRORS } from "./contract.ts";

export interface RefundableCharge {
  /** The charge in its currency, and what it took in the asset. */
  amount: string;
  currency: string;
  assetAmount: string;
  asset: string;
  /** Asset units per currency unit, as recorded on the charge. */
  rate: string;
  /** Already refunded or reserved by refunds in flight. */
  reservedAmount: string;
  reservedAssetAmount: string;
}

/**
 * The rounding rules, in one place:
 * - no amount: everything not yet refunded, in both units;
 * - the refund that brings the currency total to the charge (the last one)
 *   returns exactly what remains in the asset, so the refunds of a charge
 *   add up to its asset amount, never a unit more or less;
 * - any other partial refund is `amount` × the charge's rate, rounded down
 *   to the asset's decimals (the merchant never returns more than the share),
 *   and never more than remains in the asset.
 * The cap is needed because the recorded rate is rounded (to 18 decimals,
 * half-even) while the charge's asset amount came from the exact rate: when
 * the recorded rate is the larger, a large partial just below the whole
 * charge converts to a few units more than the charge took. Uncapped, the
 * wallet would move that money and the settle would then break the charge's
 * refund bound, leaving the refund PENDING for ever. Capped, a later refund
 * of what remains in the currency finds nothing left in the asset (409).
 */
export function refundAmounts(charge: RefundableCharge, requested: Amount | undefined, assetDecimals: number): { amount: Amount; assetAmount: Amount } {
  const remaining = sub(amount(charge.amount), amount(charge.reservedAmount));
  const remainingAsset = sub(amount(charge.assetAmount), amount(charge.reservedAssetAmount));
  if (compare(remaining, amount("0")) <= 0) {
    throw conflict(REFUND_ERRORS.exceedsCharge, `nothing of this charge remains refundable (0 ${charge.currency} remains)`);
  }
  if (compare(remainingAsset, amount("0")) <= 0) {
    throw conflict(
      REFUND_ERRORS.exceedsCharge,
      `nothing of this charge remains refundable: its whole asset amount (${formatAmount(charge.assetAmount)} ${charge.asset}) has been refunded`,
    );
  }
  const value = requested ?? remaining;
  if (compare(value, remaining) > 0) {
    throw conflict(
      REFUND_ERRORS.exceedsCharge,
      `amount: ${formatAmount(value)} ${charge.currency} is more than remains refundable of this charge: ${formatAmount(remaining)} ${charge.currency}`,
    );
  }
  if (compare(value, remaining) === 0) return { amount: value, assetAmount: remainingAsset };
  const converted = convert(value, charge.rate, assetDecimals, "down");
  const assetAmount = compare(converted, remainingAsset) > 0 ? remainingAsset : converted;
  if (isZero(assetAmount)) {
    throw invalid(
      "INVALID_REQUEST",
      `amount: ${formatAmount(value)} ${charge.currency} is worth less than the smallest unit of ${charge.asset} at this charge's rate`,
    );
  }
  return { amount: value, assetAmount };
}
