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
 *   to the asset's decimals (the merchant never returns more than the share).
 * Rounding down keeps every partial at or below its exact share, so what
 * remains in the asset is never negative.
 */
export function refundAmounts(charge: RefundableCharge, requested: Amount | undefined, assetDecimals: number): { amount: Amount; assetAmount: Amount } {
  const remaining = sub(amount(charge.amount), amount(charge.reservedAmount));
  const remainingAsset = sub(amount(charge.assetAmount), amount(charge.reservedAssetAmount));
  if (compare(remaining, amount("0")) <= 0 || compare(remainingAsset, amount("0")) <= 0) {
    throw conflict(REFUND_ERRORS.exceedsCharge, `nothing of this charge remains refundable (0 ${charge.currency} remains)`);
  }
  const value = requested ?? remaining;
  if (compare(value, remaining) > 0) {
    throw conflict(
      REFUND_ERRORS.exceedsCharge,
      `amount: ${formatAmount(value)} ${charge.currency} is more than remains refundable of this charge: ${formatAmount(remaining)} ${charge.currency}`,
    );
  }
  if (compare(value, remaining) === 0) return { amount: value, assetAmount: remainingAsset };
  const assetAmount = convert(value, charge.rate, assetDecimals, "down");
  if (isZero(assetAmount)) {
    throw invalid("INVALID_REQUEST", `amount: ${formatAmount(value)} ${charge.currency} is worth less than the smallest unit of ${charge.asset} at this charge's rate`);
  }
  return { amount: value, assetAmount };
}
