import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

import type { WalletUserStatus } from "./contract.ts";

/** A customer's wallet login. Password and PIN are argon2id hashes (PHC strings), never the secrets. */
export const WalletUser = defineEntity({
  name: "WalletUser",
  tableName: "wallet_users",
  properties: {
    id: p.uuid().primary(),
    email: p.string().length(254).unique(),
    passwordHash: p.text(),
    pinHash: p.text(),
    status: p.string().length(16).$type<WalletUserStatus>(),
    pinFailedAttempts: p.integer(),
    pinLockedUntil: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** Failed logins per email in the current window (see verify-password.ts). */
const WalletLoginThrottle = defineEntity({
  name: "WalletLoginThrottle",
  tableName: "wallet_login_throttles",
  properties: {
    email: p.string().length(254).primary(),
    windowStartedAt: p.datetime(),
    failures: p.integer(),
  },
});

const OWNER_TYPES = ["WALLET_USER", "MERCHANT", "SYSTEM"] as const;
export type OwnerType = (typeof OWNER_TYPES)[number];

/**
 * `balance` is a cache of the sum of the account's entries, updated in the
 * same transaction as the entries under a row lock; CheckLedger verifies it.
 */
export const LedgerAccount = defineEntity({
  name: "LedgerAccount",
  tableName: "ledger_accounts",
  properties: {
    id: p.uuid().primary(),
    ownerType: p.string().length(16).$type<OwnerType>(),
    ownerId: p.uuid().nullable(),
    systemCode: p.string().length(40).nullable(),
    asset: p.string().length(16),
    balance: p.decimal("string").precision(38).scale(18),
    frozen: p.boolean(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

const TRANSACTION_KINDS = ["WALLET_CREDIT", "CHARGE", "MERCHANT_CREDIT", "REFUND", "PAYOUT", "PAYOUT_REVERSAL", "ORDER_REFUND"] as const;
export type TransactionKind = (typeof TRANSACTION_KINDS)[number];

const LedgerTransaction = defineEntity({
  name: "LedgerTransaction",
  tableName: "ledger_transactions",
  properties: {
    id: p.uuid().primary(),
    idempotencyKey: p.string().length(200).nullable().unique(),
    kind: p.string().length(32).$type<TransactionKind>(),
    asset: p.string().length(16),
    amount: p.decimal("string").precision(38).scale(18),
    walletUserId: p.uuid().nullable(),
    merchantId: p.uuid().nullable(),
    description: p.string().length(500).nullable(),
    createdAt: p.datetime(),
  },
});

const LedgerEntry = defineEntity({
  name: "LedgerEntry",
  tableName: "ledger_entries",
  properties: {
    id: p.uuid().primary(),
    transactionId: p.uuid(),
    accountId: p.uuid(),
    asset: p.string().length(16),
    amount: p.decimal("string").precision(38).scale(18),
    balanceAfter: p.decimal("string").precision(38).scale(18),
    createdAt: p.datetime(),
  },
});

const CHARGE_OUTCOMES = ["SUCCEEDED", "INSUFFICIENT_FUNDS", "ACCOUNT_FROZEN"] as const;
export type ChargeOutcome = (typeof CHARGE_OUTCOMES)[number];

/** Every charge attempt, refused ones included; only SUCCEEDED ones are final (a retry replays them). */
const ChargeAttempt = defineEntity({
  name: "ChargeAttempt",
  tableName: "wallet_charge_attempts",
  properties: {
    id: p.uuid().primary(),
    idempotencyKey: p.string().length(200),
    walletUserId: p.uuid(),
    merchantId: p.uuid(),
    asset: p.string().length(16),
    amount: p.decimal("string").precision(38).scale(18),
    outcome: p.string().length(32).$type<ChargeOutcome>(),
    balanceAfter: p.decimal("string").precision(38).scale(18),
    transactionId: p.uuid().nullable(),
    createdAt: p.datetime(),
  },
});

export type WalletUserRow = InferEntity<typeof WalletUser>;

export const walletEntities = [WalletUser, WalletLoginThrottle, LedgerAccount, LedgerTransaction, LedgerEntry, ChargeAttempt];
