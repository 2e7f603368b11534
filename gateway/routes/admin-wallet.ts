import { createHash } from "node:crypto";
import { OwnerType } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { ASSET_CODES } from "../../services/wallet/contract.ts";
import { defineRoutes } from "../route.ts";
import { IDEMPOTENCY_HEADER } from "../idempotency.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";
import {
  assetSchema,
  balanceSchema,
  createWalletUserBody,
  creditWalletUserBody,
  ledgerCheckSchema,
  walletCreditSchema,
  walletUserSchema,
  walletUserWithBalancesSchema,
} from "../schemas/wallet.ts";

const accountAssetBody = {
  type: "object",
  additionalProperties: false,
  required: ["asset"],
  properties: { asset: { type: "string", enum: ASSET_CODES } },
} as const;

/**
 * The REST Idempotency-Key also becomes the ledger's key (hashed, and scoped
 * to this operation): even if the gateway's Redis replay cache lost it, the
 * ledger refuses to credit twice.
 */
/** Scoped to the wallet user like the gateway's replay store: the same header for another user is another credit. */
const ledgerKey = (header: string, walletUserId: string) =>
  header ? `admin-credit:${walletUserId.toLowerCase()}:${createHash("sha256").update(header).digest("hex")}` : undefined;

export const adminWalletRoutes = defineRoutes([
  {
    method: "post",
    path: "/admin/v1/wallet-users",
    operationId: "adminCreateWalletUser",
    summary: "Create a wallet user (a customer's wallet login)",
    description: "Email is unique case-insensitively (409 WALLET_USER_ALREADY_EXISTS). Password and PIN are stored as argon2id hashes and never returned.",
    tag: "Operator",
    auth: "admin",
    errors: [409],
    body: createWalletUserBody,
    responses: { 201: { description: "The wallet user", schema: walletUserSchema } },
    async handler({ body }, { clients }) {
      const { user } = await clients.wallet.createWalletUser({ email: body.email, password: body.password, pin: body.pin });
      return { status: 201, body: recordOf(user) };
    },
  },
  {
    method: "get",
    path: "/admin/v1/wallet-users/:id",
    operationId: "adminGetWalletUser",
    summary: "Get a wallet user with a balance per asset",
    tag: "Operator",
    auth: "admin",
    errors: [404],
    responses: { 200: { description: "The wallet user and balances", schema: walletUserWithBalancesSchema } },
    async handler({ params }, { clients }) {
      const res = await clients.wallet.getWalletUser({ id: params.id! });
      return { status: 200, body: { ...recordOf(res.user), balances: res.accounts.map(recordOf) } };
    },
  },
  {
    method: "post",
    path: "/admin/v1/wallet-users/:id/credits",
    operationId: "adminCreditWalletUser",
    summary: "Top up a wallet user's account (money entering from outside)",
    description: "Posts a balanced ledger transaction from the asset's EXTERNAL_DEPOSITS system account. With an Idempotency-Key the credit happens once.",
    tag: "Operator",
    auth: "admin",
    idempotent: true,
    errors: [404],
    body: creditWalletUserBody,
    responses: { 201: { description: "The credit and the new balance", schema: walletCreditSchema } },
    async handler({ body, params }, { clients }, ctx) {
      const res = await clients.wallet.creditWalletUser({
        walletUserId: params.id!,
        asset: body.asset,
        amount: body.amount,
        idempotencyKey: ledgerKey(ctx.get(IDEMPOTENCY_HEADER), params.id!),
      });
      return {
        status: 201,
        body: { transactionId: res.transactionId, walletUserId: params.id!.toLowerCase(), asset: res.account!.asset, balance: res.account!.balance },
      };
    },
  },
  {
    method: "post",
    path: "/admin/v1/wallet-users/:id/freeze",
    operationId: "adminFreezeWalletUser",
    summary: "Freeze a wallet user: every charge answers ACCOUNT_FROZEN until unfrozen",
    tag: "Operator",
    auth: "admin",
    errors: [404, 409],
    responses: { 200: { description: "The wallet user", schema: walletUserSchema } },
    async handler({ params }, { clients }) {
      const { user } = await clients.wallet.freezeWalletUser({ id: params.id! });
      return { status: 200, body: recordOf(user) };
    },
  },
  {
    method: "post",
    path: "/admin/v1/wallet-users/:id/unfreeze",
    operationId: "adminUnfreezeWalletUser",
    summary: "Unfreeze a wallet user",
    tag: "Operator",
    auth: "admin",
    errors: [404, 409],
    responses: { 200: { description: "The wallet user", schema: walletUserSchema } },
    async handler({ params }, { clients }) {
      const { user } = await clients.wallet.unfreezeWalletUser({ id: params.id! });
      return { status: 200, body: recordOf(user) };
    },
  },
  {
    method: "post",
    path: "/admin/v1/wallet-users/:id/accounts/freeze",
    operationId: "adminFreezeWalletAccount",
    summary: "Freeze one of a wallet user's accounts (by asset): charges from it answer ACCOUNT_FROZEN",
    tag: "Operator",
    auth: "admin",
    errors: [404],
    body: accountAssetBody,
    responses: { 200: { description: "The account", schema: balanceSchema } },
    async handler({ body, params }, { clients }) {
      const { account } = await clients.wallet.freezeAccount({ ownerType: OwnerType.WALLET_USER, ownerId: params.id!, asset: body.asset });
      return { status: 200, body: recordOf(account) };
    },
  },
  {
    method: "post",
    path: "/admin/v1/wallet-users/:id/accounts/unfreeze",
    operationId: "adminUnfreezeWalletAccount",
    summary: "Unfreeze one of a wallet user's accounts (by asset)",
    tag: "Operator",
    auth: "admin",
    errors: [404],
    body: accountAssetBody,
    responses: { 200: { description: "The account", schema: balanceSchema } },
    async handler({ body, params }, { clients }) {
      const { account } = await clients.wallet.unfreezeAccount({ ownerType: OwnerType.WALLET_USER, ownerId: params.id!, asset: body.asset });
      return { status: 200, body: recordOf(account) };
    },
  },
  {
    method: "get",
    path: "/admin/v1/ledger/check",
    operationId: "adminCheckLedger",
    summary: "Audit the ledger: balanced transactions, cached balances, no negative user or merchant balance",
    tag: "Operator",
    auth: "admin",
    responses: { 200: { description: "The audit result (ok is false when problems were found)", schema: ledgerCheckSchema } },
    async handler(_input, { clients }) {
      const res = await clients.wallet.checkLedger({});
      return {
        status: 200,
        body: {
          ok: res.ok,
          transactionsChecked: Number(res.transactionsChecked),
          accountsChecked: Number(res.accountsChecked),
          problems: res.problems,
        },
      };
    },
  },
  {
    method: "get",
    path: "/admin/v1/assets",
    operationId: "adminListAssets",
    summary: "The asset registry",
    tag: "Operator",
    auth: "admin",
    responses: {
      200: {
        description: "Every asset (the registry is small: one page)",
        schema: {
          type: "object",
          required: ["data", "hasMore", "nextCursor"],
          properties: { data: { type: "array", items: assetSchema }, hasMore: { type: "boolean" }, nextCursor: { type: "null" } },
        },
      },
    },
    async handler(_input, { clients }) {
      const { assets } = await clients.wallet.listAssets({});
      return { status: 200, body: { data: assets.map(recordOf), hasMore: false, nextCursor: null } };
    },
  },
]);
