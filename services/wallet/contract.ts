/**
 * What the edge and the wallet service agree on: asset codes and the limits
 * of wallet-user fields. Imports nothing, so the gateway can use it without
 * loading the wallet's entities or use cases.
 */
export const ASSET_CODES = ["USDT_TRON", "USDC_ETH", "BTC", "ETH"] as const;
export type AssetCode = (typeof ASSET_CODES)[number];

export const PASSWORD_MIN = 1;
export const PASSWORD_MAX = 200;
export const EMAIL_MAX = 254;
