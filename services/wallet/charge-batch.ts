import { randomUUID } from "node:crypto";
import type { UseCaseContext } from "../platform/use-case.ts";
import { conflict, DomainError, invalid } from "../platform/errors.ts";
import { add, compare, equals, formatAmount, sub, zero, type Amount } from "../platform/money.ts";
import type { ChargeOutcome } from "./entities.ts";
import { CHARGE_BATCH_MAX } from "./contract.ts";
import type { ChargeResult } from "./charge.ts";
import { walletUserNotFound } from "./get-wallet-user.ts";
import { lockAccounts, openAccounts, ownerKey, postTransactions, type PostingInput } from "./ledger.ts";
import { checkDescription, checkIdempotencyKey, parseAssetAmount, requireAsset, requireUuid } from "./wallet-input.ts";


export interface ChargeBatchItem {
  idempotencyKey: string;
  walletUserId: string;
  asset: string;
  amount: string;
  description?: string | undefined;
}

interface Checked {
  key: string;
  walletUserId: string;
  asset: string;
  value: Amount;
  description: string | null;
}

/**
 * Charge (charge.ts) for many wallet users of one merchant, in one database
 * transaction: each item gets exactly the outcome a Charge with its key would
 * (a key that succeeded before replays its first success and moves nothing;
 * a frozen or short account is refused, not final), items are evaluated in
 * order so two charges of one account see each other, and every success is
 * its own balanced ledger transaction. The merchant's account is locked and
 * its balance moved once for the whole batch: that is what lets renewals of
 * one merchant stop queueing on its balance row.
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

  return ctx.em.transactional(async (em) => {
    const userIds = [...new Set(checked.map((c) => c.walletUserId))];
    // Share locks, as Charge: a freeze waits for these charges and they for it.
    const users = await em.execute<{ id: string; status: string }[]>(
      `select id, status from wallet_users where id in (${userIds.map(() => "?").join(", ")}) order by id for share`,
      userIds,
    );
    const statusOf = new Map(users.map((u) => [u.id, u.status]));
    const unknown = userIds.find((id) => !statusOf.has(id));
    if (unknown) throw walletUserNotFound(unknown);

    const ids = await openAccounts(em, ctx.clock, [
      ...checked.map((c) => ({ owner: { type: "WALLET_USER" as const, id: c.walletUserId }, asset: c.asset })),
      ...checked.map((c) => ({ owner: { type: "MERCHANT" as const, id: merchantId }, asset: c.asset })),
    ]);
    const payerOf = (c: Checked) => ids.get(ownerKey({ type: "WALLET_USER", id: c.walletUserId }, c.asset))!;
    const payeeOf = (c: Checked) => ids.get(ownerKey({ type: "MERCHANT", id: merchantId }, c.asset))!;
    // The payers only: the merchant's account is credited last (postTransactions), not held for the batch.
    const accounts = await lockAccounts(em, checked.map(payerOf));
    // After the locks, as Charge: a racing call with one of these keys has committed or waits behind us.
    const replays = await findReplays(em, checked, merchantId);

    const now = ctx.clock.now();
    const results: ChargeResult[] = [];
    const attempts: unknown[][] = [];
    const postings: (PostingInput & { transactionId: string })[] = [];
    const spent = new Map<string, Amount>();
    for (const c of checked) {
      const replay = replays.get(c.key);
      if (replay) {
        results.push({ outcome: "SUCCEEDED", transactionId: replay.transactionId, balanceAfter: replay.balanceAfter, replayed: true });
        continue;
      }
      const payerId = payerOf(c);
      const payer = accounts.get(payerId)!;
      const balance = sub(payer.balance, spent.get(payerId) ?? zero());
      let outcome: ChargeOutcome = "SUCCEEDED";
      let transactionId: string | undefined;
      let balanceAfter = balance;
      if (statusOf.get(c.walletUserId) === "FROZEN" || payer.frozen) outcome = "ACCOUNT_FROZEN";
      else if (compare(balance, c.value) < 0) outcome = "INSUFFICIENT_FUNDS";
      else {
        transactionId = randomUUID();
        balanceAfter = sub(balance, c.value);
        spent.set(payerId, add(spent.get(payerId) ?? zero(), c.value));
        postings.push({
          transactionId,
          kind: "CHARGE",
          asset: c.asset,
          amount: c.value,
          idempotencyKey: c.key,
          walletUserId: c.walletUserId,
          merchantId,
          description: c.description,
          legs: [
            { accountId: payerId, amount: sub(zero(), c.value) },
            { accountId: payeeOf(c), amount: c.value },
          ],
        });
      }
      results.push({ outcome, transactionId, balanceAfter: formatAmount(balanceAfter), replayed: false });
      attempts.push([randomUUID(), c.key, c.walletUserId, merchantId, c.asset, formatAmount(c.value), outcome, formatAmount(balanceAfter), transactionId ?? null, now]);
    }
    // Last before the commit: the merchant's account is locked from its final statement on only.
    const posted = await postTransactions(em, ctx.clock, accounts, postings, new Set(checked.map(payeeOf)), async () => {
      if (attempts.length === 0) return;
      await em.execute(
        `insert into wallet_charge_attempts (id, idempotency_key, wallet_user_id, merchant_id, asset, amount, outcome, balance_after, transaction_id, created_at)
         values ${attempts.map(() => "(?, ?, ?, ?, ?, ?::numeric, ?, ?::numeric, ?, ?)").join(", ")}`,
        attempts.flat(),
      );
    });
    // The running balances of the payers are the ones decided above (postTransactions checked them against the database).
    posted.forEach((p, i) => {
      const payerId = postings[i]!.legs[0]!.accountId;
      if (p.balancesAfter.get(payerId) === undefined) throw new Error(`charge batch: no balance after for ${payerId}`);
    });
    return results;
  });
}

/** The field rules of Charge, named as `charges[i].field`. */
function checkItem(item: ChargeBatchItem, i: number): Checked {
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

/** The first successes of keys used before (findReplay for a set), with the payer's balance right after each. */
async function findReplays(em: UseCaseContext["em"], checked: Checked[], merchantId: string) {
  const rows = await em.execute<{ id: string; idempotency_key: string; kind: string; asset: string; amount: string; wallet_user_id: string | null; merchant_id: string | null; balance_after: string }[]>(
    `select t.id, t.idempotency_key, t.kind, t.asset, t.amount::text as amount, t.wallet_user_id, t.merchant_id, e.balance_after::text as balance_after
       from ledger_transactions t join ledger_entries e on e.transaction_id = t.id and e.amount < 0
      where t.idempotency_key in (${checked.map(() => "?").join(", ")})`,
    checked.map((c) => c.key),
  );
  const byKey = new Map(checked.map((c) => [c.key, c]));
  const replays = new Map<string, { transactionId: string; balanceAfter: string }>();
  for (const row of rows) {
    const c = byKey.get(row.idempotency_key)!;
    const same = row.kind === "CHARGE" && row.asset === c.asset && equals(row.amount, c.value) && row.wallet_user_id === c.walletUserId && row.merchant_id === merchantId;
    if (!same) throw conflict("IDEMPOTENCY_KEY_REUSED", `charges[${checked.indexOf(c)}].idempotencyKey: was already used for a different ledger movement`);
    replays.set(row.idempotency_key, { transactionId: row.id, balanceAfter: formatAmount(row.balance_after) });
  }
  return replays;
}
