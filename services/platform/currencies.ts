/**
 * Currencies a plan (or a payment order) may be priced in. Fiat codes follow
 * ISO 4217; crypto codes are the coins' tickers. Assets (wallet registry) say
 * which currency they settle in.
 */
export const CURRENCIES = ["USD", "EUR", "GBP", "BTC", "ETH", "TRX"] as const;
export type Currency = (typeof CURRENCIES)[number];
export const isCurrency = (value: string): value is Currency => (CURRENCIES as readonly string[]).includes(value);
