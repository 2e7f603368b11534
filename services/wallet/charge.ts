import { randomUUID } from "node:crypto";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { add, compare, formatAmount, sub, zero, type Amount } from "../platform/money.ts";
import type { ChargeOutcome } from "./entities.ts";
import { walletUserNotFound } from "./get-wallet-user.ts";
import { lockAccounts, openAccounts, ownerKey, postTransactions, type PostingInput } from "./ledger.ts";
import { findReplay, findReplays, type MovementRequest } from "./ledger-replay.ts";
import { recordChargeAttempts } from "./charge-attempt-store.ts";
import { lockWalletUsersForCharge } from "./wallet-user-store.ts";
import { checkDescription, checkIdempotencyKey, parseAssetAmount, requireAsset, requireUuid } from "./wallet-input.ts";

interface ChargeInput {
  idempotencyKey: string;
  walletUserId: string;
  merchantId: string;
  asset: string;
  amount: string;
  description?: string | undefined;
}

export interface ChargeResult {
  outcome: ChargeOutcome;
  transactionId: string | undefined;
  /** The wallet user's balance in this asset after the attempt (canonical form). */
  balanceAfter: string;
  /** True when this answer is the first outcome of an earlier call with the same key. */
  replayed: boolean;
}

/** A charge whose fields passed the input rules (wallet-input.ts). */
export interface CheckedCharge {
  key: string;
  walletUserId: string;
  asset: string;
  value: Amount;
  description: string | null;
}

/**
 * Moves `amount` from the wallet user's account to the merchant's, as one
 * balanced transaction. Refusals (frozen, insufficient funds) are outcomes,
 * recorded in wallet_charge_attempts for the audit trail but NOT final: a
 * retry with the same key evaluates again (the money may have arrived since).
 * A SUCCEEDED charge is final: a retry returns it and moves nothing.
 */
export async function charge(ctx: UseCaseContext, input: ChargeInput): Promise<ChargeResult> {
  const key = checkIdempotencyKey(input.idempotencyKey, true)!;
  const walletUserId = requireUuid("walletUserId", input.walletUserId);
  const merchantId = requireUuid("merchantId", input.merchantId);
  const asset = requireAsset(input.asset);
  const value = parseAssetAmount("amount", input.amount, asset);
  const description = checkDescription(input.description);
  const request: MovementRequest = { kind: "CHARGE", asset: asset.code, amount: value, walletUserId, merchantId };

  const replay = await findReplay(ctx.em, key, request, "debit");
  if (replay) return succeeded(replay.transactionId, replay.balanceAfter, true);
  try {
    const [result] = await chargeMany(ctx, merchantId, [{ key, walletUserId, asset: asset.code, value, description }], () => "");
    return result!;
  } catch (err) {
    // The key was taken by a movement on other accounts (so no lock ordered us): answer as a retry would.
    if (err instanceof UniqueConstraintViolationException) {
      const late = await findReplay(ctx.em.fork(), key, request, "debit");
      if (late) return succeeded(late.transactionId, late.balanceAfter, true);
    }
    throw err;
  }
}

/**
 * The charging core of Charge and ChargeBatch: charges of one merchant in one
 * database transaction, each with exactly the outcome a Charge with its key
 * gets (a key that succeeded before replays its first success and moves
 * nothing; a frozen or short account is refused, not final), evaluated in
 * order so two charges of one account see each other, every success its own
 * balanced ledger transaction.
 *
 * No hot merchant row: only the payers' accounts are locked for the
 * decisions; the merchant's account, which only receives, is locked and
 * credited in the transaction's last statement (ledger.ts postTransactions),
 * so it is held for one statement and the commit, once per call, however
 * many charges the call carries. `field(i)` prefixes error messages.
 */
export async function chargeMany(ctx: UseCaseContext, merchantId: string, checked: CheckedCharge[], field: (i: number) => string): Promise<ChargeResult[]> {
  return ctx.em.transactional(async (em) => {
    const userIds = [...new Set(checked.map((c) => c.walletUserId))];
    // Share locks, as Charge: a freeze waits for these charges and they for it.
    const users = await lockWalletUsersForCharge(em, userIds);
    const statusOf = new Map(users.map((u) => [u.id, u.status]));
    const unknown = userIds.find((id) => !statusOf.has(id));
    if (unknown) throw walletUserNotFound(unknown);

    const ids = await openAccounts(em, ctx.clock, [
      ...checked.map((c) => ({ owner: { type: "WALLET_USER" as const, id: c.walletUserId }, asset: c.asset })),
      ...checked.map((c) => ({ owner: { type: "MERCHANT" as const, id: merchantId }, asset: c.asset })),
    ]);
    const payerOf = (c: CheckedCharge) => ids.get(ownerKey({ type: "WALLET_USER", id: c.walletUserId }, c.asset))!;
    const payeeOf = (c: CheckedCharge) => ids.get(ownerKey({ type: "MERCHANT", id: merchantId }, c.asset))!;
    // The payers only: the merchant's account is credited last (postTransactions), not held for the batch.
    const accounts = await lockAccounts(em, checked.map(payerOf));
    // After the locks, as Charge: a racing call with one of these keys has committed or waits behind us.
    const replays = await findReplays(
      em,
      checked.map((c) => ({ key: c.key, request: { kind: "CHARGE", asset: c.asset, amount: c.value, walletUserId: c.walletUserId, merchantId } })),
      "debit",
      field,
    );

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
      attempts.push([
        randomUUID(),
        c.key,
        c.walletUserId,
        merchantId,
        c.asset,
        formatAmount(c.value),
        outcome,
        formatAmount(balanceAfter),
        transactionId ?? null,
        now,
      ]);
    }
    // Last before the commit: the merchant's account is locked from its final statement on only.
    // postTransactions checks the payers' running balances decided above against the database's.
    await postTransactions(em, ctx.clock, accounts, postings, new Set(checked.map(payeeOf)), async () => {
      if (attempts.length === 0) return;
      await recordChargeAttempts(em, attempts);
    });
    return results;
  });
}

const succeeded = (transactionId: string, balanceAfter: string, replayed: boolean): ChargeResult => ({
  outcome: "SUCCEEDED",
  transactionId,
  balanceAfter,
  replayed,
});
