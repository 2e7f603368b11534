import type { Logger } from "../platform/logger.ts";
import type { UseCaseContext } from "../platform/use-case.ts";
import type { Chain } from "./addresses/payout-address.ts";
import type { ClaimLinks } from "./order-refunds/claim-token.ts";

/** A registry asset as payouts need it (the wallet's ListAssets). */
export interface PayoutAsset {
  code: string;
  network: string;
  decimals: number;
  requiredConfirmations: number;
  blockSeconds: number;
  payoutFee: string;
  payoutMinimum: string;
}

/** What payouts need from the wallet service (never its tables). Failures throw: the wallet-call protocol counts them. */
interface PayoutWallet {
  listAssets(): Promise<PayoutAsset[]>;
  /** `amount` of `currency` in the asset, rounded down (the review threshold in the payout's asset). */
  quoteDown(input: { amount: string; currency: string; asset: string }): Promise<string>;
  debit(input: { idempotencyKey: string; merchantId: string; asset: string; amount: string; description: string }): Promise<{
    outcome: "SUCCEEDED" | "MERCHANT_BALANCE_INSUFFICIENT";
    transactionId: string | null;
    merchantBalanceAfter: string;
  }>;
  reverse(input: { idempotencyKey: string; merchantId: string; asset: string; amount: string; description: string }): Promise<{ transactionId: string }>;
}

/** Where a transfer stands on the chain, as the chain port reports it. */
export interface ChainStatus {
  state: "SUBMITTED" | "CONFIRMED" | "FAILED";
  txHash: string | null;
  confirmations: number;
  failureReason: string | null;
}

export interface ChainTransfer {
  /** Also the idempotency key of the transfer: the same id never sends twice. */
  payoutId: string;
  network: string;
  asset: string;
  address: string;
  amount: string;
  requiredConfirmations: number;
  blockSeconds: number;
}

/**
 * The chain, as a port: the sandbox's fake chain (sandbox-chain.ts) or a
 * custody signer over HTTP (signer-chain.ts). `submit` is idempotent on the
 * payout id: a retry answers the first transfer and sends nothing.
 */
export interface ChainPort {
  readonly name: "sandbox" | "signer";
  submit(ctx: UseCaseContext, transfer: ChainTransfer): Promise<ChainStatus>;
  /** The transfer's state now; undefined when the chain never heard of it. */
  status(ctx: UseCaseContext, transfer: ChainTransfer): Promise<ChainStatus | undefined>;
}

/** What an order refund needs to know of its order (the orders service's record, over RPC). */
interface RefundableOrder {
  id: string;
  asset: string;
  /** What the order's confirmed transfers brought in (late ones too: they are credited as well), exact. */
  confirmed: string;
}

interface PayoutOrders {
  /** The merchant's order, or undefined when it has none with this id (another merchant's included). */
  refundable(merchantId: string, orderId: string): Promise<RefundableOrder | undefined>;
}

export interface PayoutPorts {
  wallet: PayoutWallet;
  /** null: live mode without PAYOUT_SIGNER_URL, payouts are unavailable (503 PAYOUTS_UNAVAILABLE). */
  chain: ChainPort | null;
  orders: PayoutOrders;
  /** The claim links of order refunds (SECRETS_KEY, PUBLIC_BASE_URL). */
  claimLinks: ClaimLinks;
  /** The merchant's name, as the claim page shows it. */
  merchantName(merchantId: string): Promise<string>;
  /** The merchant's review threshold in USD (null: no review). */
  reviewAbove(merchantId: string): Promise<string | null>;
  /** Which chain addresses must be on. */
  addressChain: Chain;
  /** PAYOUT_DESTINATION_COOLDOWN_MINUTES. */
  cooldownMinutes: number;
  logger: Logger;
}
