import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Account, BalanceTransaction } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";

/** Opened accounts only: an asset that never moved is not "held". */
export function balanceObject(accounts: Account[]) {
  return { object: "balance", available: accounts.filter((a) => a.id !== "").map((a) => ({ asset: a.asset, amount: a.balance })) };
}

export function balanceTransactionBody(t: BalanceTransaction) {
  return {
    id: t.id,
    object: "balance_transaction",
    type: t.type,
    asset: t.asset,
    amount: t.amount,
    balanceAfter: t.balanceAfter,
    sourceType: t.sourceType ?? null,
    sourceId: t.sourceId ?? null,
    createdAt: timestampDate(t.createdAt!).toISOString(),
  };
}
