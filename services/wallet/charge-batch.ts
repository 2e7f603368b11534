import { DomainError, invalid } from "../platform/errors.ts";
import type { UseCaseContext } from "../platform/use-case.ts";
import { CHARGE_BATCH_MAX } from "./contract.ts";
import { chargeMany, type ChargeResult, type CheckedCharge } from "./charge.ts";
import { checkDescription, checkIdempotencyKey, parseAssetAmount, requireAsset, requireUuid } from "./wallet-input.ts";

interface ChargeBatchItem {
  idempotencyKey: string;
  walletUserId: string;
  asset: string;
  amount: string;
  description?: string | undefined;
}

/**
 * Charge (charge.ts) for many wallet users of one merchant, in one database
 * transaction (the renewal engine's batches): each item gets exactly the
 * outcome a Charge with its key would, and the merchant's account is credited
 * once for the whole call. Bad input names the item (`charges[3].amount`) and
 * writes nothing.
 */
export async function chargeBatch(ctx: UseCaseContext, merchantIdText: string, items: ChargeBatchItem[]): Promise<ChargeResult[]> {
  const merchantId = requireUuid("merchantId", merchantIdText);
  if (items.length === 0) return [];
  if (items.length > CHARGE_BATCH_MAX) throw invalid("INVALID_REQUEST", `charges: at most ${CHARGE_BATCH_MAX} items`);
  const checked = items.map((item, i) => checkItem(item, i));
  const keys = new Set<string>();
  checked.forEach((c, i) => {
    if (keys.has(c.key)) throw invalid("INVALID_REQUEST", `charges[${i}].idempotencyKey: appears twice in the batch`);
    keys.add(c.key);
  });
  return chargeMany(ctx, merchantId, checked, (i) => `charges[${i}].`);
}

/** The field rules of Charge, named as `charges[i].field`. */
function checkItem(item: ChargeBatchItem, i: number): CheckedCharge {
  try {
    const asset = requireAsset(item.asset);
    return {
      key: checkIdempotencyKey(item.idempotencyKey, true)!,
      walletUserId: requireUuid("walletUserId", item.walletUserId),
      asset: asset.code,
      value: parseAssetAmount("amount", item.amount, asset),
      description: checkDescription(item.description),
    };
  } catch (err) {
    if (err instanceof DomainError && err.kind === "invalid") throw invalid(err.code, `charges[${i}].${err.message}`);
    throw err;
  }
}
