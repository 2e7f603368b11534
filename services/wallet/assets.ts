import type { Currency } from "../platform/currencies.ts";
import { ASSET_CODES, type AssetCode } from "./contract.ts";

/**
 * The asset registry: what a wallet can hold and a payment can be made in.
 * Configured in code (changing it is a deploy, like a migration): an asset
 * never disappears while balances in it exist. Stablecoins settle 1:1 in
 * their currency; the others are priced by the RateSource.
 */
export interface AssetInfo {
  code: AssetCode;
  network: string;
  /** Smallest unit: amounts of this asset never have more fraction digits. */
  decimals: number;
  /** The currency one unit is worth one of (stablecoins) or is (coins). */
  currency: Currency;
  name: string;
  /** On-chain confirmations before a deposit counts as received (and a payout as PAID). */
  requiredConfirmations: number;
  /** Seconds between blocks on its network (the sandbox chain confirms payouts at this pace). */
  blockSeconds: number;
  /** The network fee a payout in this asset costs the merchant, in the asset (decimal string). */
  payoutFee: string;
  /** The smallest payout amount (decimal string, in the asset). */
  payoutMinimum: string;
}

export const ASSETS: readonly AssetInfo[] = Object.freeze([
  {
    code: "USDT_TRON",
    network: "TRON",
    decimals: 6,
    currency: "USD",
    name: "Tether USD (TRC-20)",
    requiredConfirmations: 19,
    blockSeconds: 3,
    payoutFee: "1",
    payoutMinimum: "5",
  },
  {
    code: "USDC_ETH",
    network: "ETHEREUM",
    decimals: 6,
    currency: "USD",
    name: "USD Coin (ERC-20)",
    requiredConfirmations: 12,
    blockSeconds: 12,
    payoutFee: "2.5",
    payoutMinimum: "10",
  },
  {
    code: "BTC",
    network: "BITCOIN",
    decimals: 8,
    currency: "BTC",
    name: "Bitcoin",
    requiredConfirmations: 2,
    blockSeconds: 600,
    payoutFee: "0.00002",
    payoutMinimum: "0.0001",
  },
  {
    code: "ETH",
    network: "ETHEREUM",
    decimals: 18,
    currency: "ETH",
    name: "Ether",
    requiredConfirmations: 12,
    blockSeconds: 12,
    payoutFee: "0.0005",
    payoutMinimum: "0.005",
  },
]);

const BY_CODE = new Map<string, AssetInfo>(ASSETS.map((a) => [a.code, a]));

export { ASSET_CODES };

export function findAsset(code: string): AssetInfo | undefined {
  return BY_CODE.get(code);
}

// The contract's code list and this registry must name the same assets, in the same order.
if (ASSETS.map((a) => a.code).join() !== ASSET_CODES.join()) throw new Error("services/wallet/contract.ts ASSET_CODES and the asset registry disagree");
