import type { ServiceImpl } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ChargeOutcome, OwnerType, RefundOutcome, WalletService } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { ServiceDeps } from "../platform/service-deps.ts";
import { useCaseContext } from "../platform/rpc/use-case-context.ts";
import { invalid } from "../platform/errors.ts";
import { toOptionalTimestamp, toTimestamp } from "../platform/timestamps.ts";
import { withRecordJson } from "../platform/rpc/record-json.ts";
import type { ChargeOutcome as Outcome, WalletUserRow } from "./entities.ts";
import { ASSETS, type AssetInfo } from "./assets.ts";
import { staticRateSource, type RateSource } from "./rates.ts";
import { assetRecord, balanceRecord, balanceTransactionRecord, walletUserRecord } from "./wallet-records.ts";
import { createWalletUser } from "./create-wallet-user.ts";
import { getWalletUser } from "./get-wallet-user.ts";
import { findWalletUserByEmail } from "./find-wallet-user-by-email.ts";
import { verifyPassword } from "./verify-password.ts";
import { verifyPin } from "./verify-pin.ts";
import { quote } from "./quote.ts";
import { listAccounts, type AccountHolder, type AccountView } from "./list-accounts.ts";
import { creditWalletUser } from "./credit-wallet-user.ts";
import { charge } from "./charge.ts";
import { chargeBatch } from "./charge-batch.ts";
import { creditMerchant } from "./credit-merchant.ts";
import { checkLedger } from "./check-ledger.ts";
import { refund } from "./refund.ts";
import { listBalanceTransactions } from "./list-balance-transactions.ts";
import { exportBalanceTransactions } from "./export-balance-transactions.ts";
import { debitForPayout, reversePayout } from "./payout-funds.ts";
import { reconcile } from "../reconciliation/reconcile.ts";
import { freezeWalletUser, unfreezeWalletUser } from "./freeze-wallet-user.ts";
import { setAccountFrozen } from "./set-account-frozen.ts";

const OUTCOME_TO_PROTO: Record<Outcome, ChargeOutcome> = {
  SUCCEEDED: ChargeOutcome.SUCCEEDED,
  INSUFFICIENT_FUNDS: ChargeOutcome.INSUFFICIENT_FUNDS,
  ACCOUNT_FROZEN: ChargeOutcome.ACCOUNT_FROZEN,
};

function holderFromProto(ownerType: OwnerType, ownerId: string): AccountHolder {
  if (ownerType === OwnerType.WALLET_USER) return { type: "WALLET_USER", id: ownerId };
  if (ownerType === OwnerType.MERCHANT) return { type: "MERCHANT", id: ownerId };
  throw invalid("INVALID_REQUEST", "ownerType: must be WALLET_USER or MERCHANT");
}

/** The typed messages are the records (wallet-records.ts) field by field, and carry them whole for the gateway. */
function userMessage(user: WalletUserRow, now: Date) {
  const r = walletUserRecord(user, now);
  return withRecordJson({ ...r, createdAt: toTimestamp(r.createdAt), pinLockedUntil: toOptionalTimestamp(r.pinLockedUntil) }, r);
}

const accountMessage = (a: AccountView) => withRecordJson({ id: a.id, asset: a.asset, balance: a.balance, frozen: a.frozen }, balanceRecord(a));

const assetMessage = (a: AssetInfo) => withRecordJson({ ...a }, assetRecord(a));

/**
 * What the wallet tells others after a commit, wired by the composition root
 * (services/routes.ts): the wallet knows no subscriptions, recurring billing
 * subscribes to credits (a past-due subscription the account funds retries now).
 */
interface WalletHooks {
  /** After a credit's transaction committed; never throws. */
  accountCredited(credit: { walletUserId: string; asset: string; transactionId: string }): Promise<unknown>;
}

/** Maps messages to use cases; amounts cross as canonical decimal strings, exact at the asset's decimals. */
export function walletService(deps: ServiceDeps, hooks: WalletHooks, rates: RateSource = staticRateSource()): ServiceImpl<typeof WalletService> {
  const now = () => deps.clock.now();
  return {
    async createWalletUser(req, call) {
      const user = await createWalletUser(useCaseContext(call), { email: req.email, password: req.password, pin: req.pin });
      return { user: userMessage(user, now()) };
    },
    async getWalletUser(req, call) {
      const ctx = useCaseContext(call);
      const user = await getWalletUser(ctx, req.id);
      const accounts = req.withoutAccounts ? [] : await listAccounts(ctx, { type: "WALLET_USER", id: user.id });
      return { user: userMessage(user, now()), accounts: accounts.map(accountMessage) };
    },
    async findWalletUserByEmail(req, call) {
      return { user: userMessage(await findWalletUserByEmail(useCaseContext(call), req.email), now()) };
    },
    async verifyPassword(req, call) {
      return { user: userMessage(await verifyPassword(useCaseContext(call), { email: req.email, password: req.password }), now()) };
    },
    async verifyPin(req, call) {
      const res = await verifyPin(useCaseContext(call), { walletUserId: req.walletUserId, pin: req.pin });
      return {
        ok: res.ok,
        attemptsLeft: res.attemptsLeft,
        locked: res.locked,
        lockedUntil: toOptionalTimestamp(res.lockedUntil),
      };
    },
    async listAssets() {
      return { assets: ASSETS.map(assetMessage) };
    },
    async quote(req, call) {
      const res = await quote(useCaseContext(call), rates, { amount: req.amount, currency: req.currency, asset: req.asset, rounding: req.rounding });
      return { assetAmount: res.assetAmount, rate: res.rate, rateAt: toTimestamp(res.rateAt) };
    },
    async listAccounts(req, call) {
      const accounts = await listAccounts(useCaseContext(call), holderFromProto(req.ownerType, req.ownerId));
      return { accounts: accounts.map(accountMessage) };
    },
    async creditWalletUser(req, call) {
      const res = await creditWalletUser(useCaseContext(call), {
        walletUserId: req.walletUserId,
        asset: req.asset,
        amount: req.amount,
        idempotencyKey: req.idempotencyKey,
      });
      // Committed: past-due subscriptions this account funds may be retried now (recurring billing).
      if (!res.replayed) await hooks.accountCredited({ walletUserId: req.walletUserId.toLowerCase(), asset: res.asset, transactionId: res.transactionId });
      return {
        transactionId: res.transactionId,
        account: accountMessage({ id: res.accountId, asset: res.asset, balance: res.balanceAfter, frozen: res.frozen }),
      };
    },
    async charge(req, call) {
      const res = await charge(useCaseContext(call), {
        idempotencyKey: req.idempotencyKey,
        walletUserId: req.walletUserId,
        merchantId: req.merchantId,
        asset: req.asset,
        amount: req.amount,
        description: req.description,
      });
      return { outcome: OUTCOME_TO_PROTO[res.outcome], transactionId: res.transactionId, balanceAfter: res.balanceAfter };
    },
    async chargeBatch(req, call) {
      const results = await chargeBatch(useCaseContext(call), req.merchantId, req.charges);
      return { results: results.map((res) => ({ outcome: OUTCOME_TO_PROTO[res.outcome], transactionId: res.transactionId, balanceAfter: res.balanceAfter })) };
    },
    async creditMerchant(req, call) {
      const res = await creditMerchant(useCaseContext(call), {
        idempotencyKey: req.idempotencyKey,
        merchantId: req.merchantId,
        asset: req.asset,
        amount: req.amount,
        description: req.description,
      });
      return {
        transactionId: res.transactionId,
        account: accountMessage({ id: res.accountId, asset: res.asset, balance: res.balanceAfter, frozen: res.frozen }),
      };
    },
    async refund(req, call) {
      const res = await refund(useCaseContext(call), {
        idempotencyKey: req.idempotencyKey,
        merchantId: req.merchantId,
        walletUserId: req.walletUserId,
        asset: req.asset,
        amount: req.amount,
        description: req.description,
      });
      // Committed: for the customer's account this is an ordinary credit (a past-due subscription it funds retries now).
      // Also on a replay: the job id is the transaction's, so a crash before this line is made good by the caller's retry.
      if (res.transactionId) await hooks.accountCredited({ walletUserId: req.walletUserId.toLowerCase(), asset: req.asset, transactionId: res.transactionId });
      return {
        outcome: res.outcome === "SUCCEEDED" ? RefundOutcome.SUCCEEDED : RefundOutcome.MERCHANT_BALANCE_INSUFFICIENT,
        transactionId: res.transactionId,
        merchantBalanceAfter: res.merchantBalanceAfter,
      };
    },
    async debitForPayout(req, call) {
      const res = await debitForPayout(useCaseContext(call), {
        idempotencyKey: req.idempotencyKey,
        merchantId: req.merchantId,
        asset: req.asset,
        amount: req.amount,
        description: req.description,
      });
      return {
        outcome: res.outcome === "SUCCEEDED" ? RefundOutcome.SUCCEEDED : RefundOutcome.MERCHANT_BALANCE_INSUFFICIENT,
        transactionId: res.transactionId,
        merchantBalanceAfter: res.merchantBalanceAfter,
      };
    },
    async reversePayout(req, call) {
      const res = await reversePayout(useCaseContext(call), {
        idempotencyKey: req.idempotencyKey,
        merchantId: req.merchantId,
        asset: req.asset,
        amount: req.amount,
        description: req.description,
      });
      return { transactionId: res.transactionId, merchantBalanceAfter: res.merchantBalanceAfter };
    },
    async listBalanceTransactions(req, call) {
      const page = await listBalanceTransactions(useCaseContext(call), {
        merchantId: req.merchantId,
        asset: req.asset,
        type: req.type,
        createdAfter: req.createdAfter ? timestampDate(req.createdAfter) : undefined,
        limit: req.limit,
        cursor: req.cursor,
      });
      return {
        transactions: page.items.map((t) =>
          withRecordJson(
            {
              id: t.id,
              type: t.type,
              asset: t.asset,
              amount: t.amount,
              balanceAfter: t.balanceAfter,
              sourceType: t.sourceType ?? undefined,
              sourceId: t.sourceId ?? undefined,
              transactionId: t.transactionId,
              createdAt: toTimestamp(t.createdAt),
            },
            balanceTransactionRecord(t),
          ),
        ),
        hasMore: page.hasMore,
        nextCursor: page.nextCursor,
      };
    },
    async exportBalanceTransactions(req, call) {
      const batch = await exportBalanceTransactions(useCaseContext(call), {
        merchantId: req.merchantId,
        from: req.from ? timestampDate(req.from) : undefined,
        to: req.to ? timestampDate(req.to) : undefined,
        after: req.after,
        limit: req.limit,
      });
      return {
        transactions: batch.transactions.map((t) => ({
          id: t.id,
          type: t.type,
          asset: t.asset,
          amount: t.amount,
          balanceAfter: t.balanceAfter,
          sourceType: t.sourceType ?? undefined,
          sourceId: t.sourceId ?? undefined,
          transactionId: t.transactionId,
          createdAt: toTimestamp(t.createdAt),
        })),
        next: batch.next,
      };
    },
    async reconcile(_req, call) {
      // Incremental: a full pass over all history is the job's (daily) and the CLI's (`billing reconcile --full`).
      const res = await reconcile(useCaseContext(call), deps.logger, { scope: "INCREMENTAL", overlapMs: deps.config.reconcileOverlapMs });
      return {
        status: res.status,
        checked: BigInt(res.checked),
        newlyRecorded: BigInt(res.newlyRecorded),
        anomalies: res.anomalies.map((a) => ({
          kind: a.kind,
          ownerType: a.ownerType,
          ownerId: a.ownerId,
          walletTransactionId: a.walletTransactionId ?? undefined,
          detailsJson: JSON.stringify(a.details),
        })),
      };
    },
    async checkLedger(_req, call) {
      const res = await checkLedger(useCaseContext(call));
      return {
        ok: res.ok,
        transactionsChecked: BigInt(res.transactionsChecked),
        accountsChecked: BigInt(res.accountsChecked),
        problems: res.problems,
      };
    },
    async freezeWalletUser(req, call) {
      return { user: userMessage(await freezeWalletUser(useCaseContext(call), req.id), now()) };
    },
    async unfreezeWalletUser(req, call) {
      return { user: userMessage(await unfreezeWalletUser(useCaseContext(call), req.id), now()) };
    },
    async freezeAccount(req, call) {
      const account = await setAccountFrozen(useCaseContext(call), { holder: holderFromProto(req.ownerType, req.ownerId), asset: req.asset, frozen: true });
      return { account: accountMessage(account) };
    },
    async unfreezeAccount(req, call) {
      const account = await setAccountFrozen(useCaseContext(call), { holder: holderFromProto(req.ownerType, req.ownerId), asset: req.asset, frozen: false });
      return { account: accountMessage(account) };
    },
  };
}
