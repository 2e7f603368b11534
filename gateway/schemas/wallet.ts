import { ASSET_CODES, WALLET_USER_STATUSES, PASSWORD_MAX, PASSWORD_MIN } from "../../services/wallet/contract.ts";
import { amountOutSchema, amountSchema, dateTimeSchema, emailSchema, nullable, uuidSchema } from "./common.ts";

export const createWalletUserBody = {
  type: "object",
  additionalProperties: false,
  required: ["email", "password", "pin"],
  properties: {
    email: { ...emailSchema, description: "Unique, case-insensitive (stored trimmed and lower-cased)." },
    password: { type: "string", minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX, description: "Stored as an argon2id hash only." },
    pin: { type: "string", pattern: "^\\d{6}$", description: "Six-digit payment PIN; stored as an argon2id hash only." },
  },
} as const;

export const creditWalletUserBody = {
  type: "object",
  additionalProperties: false,
  required: ["asset", "amount"],
  properties: {
    asset: { type: "string", enum: ASSET_CODES },
    amount: { ...amountSchema, description: "Greater than 0, with at most as many fraction digits as the asset has decimals." },
  },
} as const;

export const walletUserSchema = {
  type: "object",
  required: ["id", "email", "status", "createdAt", "pinLocked", "pinLockedUntil"],
  properties: {
    id: uuidSchema,
    email: { type: "string" },
    status: { type: "string", enum: [...WALLET_USER_STATUSES] },
    createdAt: dateTimeSchema,
    pinLocked: { type: "boolean", description: "True while the PIN is locked after 5 wrong tries." },
    pinLockedUntil: nullable(dateTimeSchema),
  },
} as const;

export const balanceSchema = {
  type: "object",
  required: ["asset", "balance", "frozen"],
  properties: {
    asset: { type: "string", enum: ASSET_CODES },
    balance: amountOutSchema,
    frozen: { type: "boolean" },
  },
} as const;

export const walletUserWithBalancesSchema = {
  ...walletUserSchema,
  required: [...walletUserSchema.required, "balances"],
  properties: {
    ...walletUserSchema.properties,
    balances: { type: "array", items: balanceSchema, description: 'One per registry asset, "0" where nothing moved yet.' },
  },
} as const;

export const walletCreditSchema = {
  type: "object",
  required: ["transactionId", "walletUserId", "asset", "balance"],
  properties: {
    transactionId: uuidSchema,
    walletUserId: uuidSchema,
    asset: { type: "string", enum: ASSET_CODES },
    balance: { ...amountOutSchema, description: "The account's balance right after this credit." },
  },
} as const;

export const ledgerCheckSchema = {
  type: "object",
  required: ["ok", "transactionsChecked", "accountsChecked", "problems"],
  properties: {
    ok: { type: "boolean" },
    transactionsChecked: { type: "integer" },
    accountsChecked: { type: "integer" },
    problems: { type: "array", items: { type: "string" } },
  },
} as const;

export const assetSchema = {
  type: "object",
  required: ["code", "network", "decimals", "currency", "name", "requiredConfirmations", "payoutFee", "payoutMinimum"],
  properties: {
    code: { type: "string" },
    network: { type: "string" },
    decimals: { type: "integer" },
    currency: { type: "string" },
    name: { type: "string" },
    requiredConfirmations: { type: "integer" },
    payoutFee: { type: "string", description: "The network fee a payout in this asset costs, in the asset." },
    payoutMinimum: { type: "string", description: "The smallest payout amount, in the asset." },
  },
} as const;
