import type { Currency } from "../platform/currencies.ts";

/**
 * Where exchange rates come from. Every rate is expressed through USD (the
 * price of one unit in USD), so any pair converts via USD with one final
 * rounding. A live source (an exchange feed) implements the same interface.
 */
export interface RateSource {
  /** USD per one unit of `currency` as a decimal string, and when it was observed. */
  usdPrice(currency: Currency, now: Date): Promise<{ usd: string; at: Date }>;
}

/** Fixed sandbox prices (docs/operations.md, "Wallet and ledger"): deterministic, so tests and demos can compute expected amounts. */
const SANDBOX_USD_PRICES: Readonly<Record<Currency, string>> = Object.freeze({
  USD: "1",
  EUR: "1.08",
  GBP: "1.27",
  BTC: "60000",
  ETH: "3000",
  TRX: "0.12",
});

/** A static table; `at` is the service clock's now, since the table is always current. */
export function staticRateSource(prices: Readonly<Record<Currency, string>> = SANDBOX_USD_PRICES): RateSource {
  return {
    async usdPrice(currency, now) {
      return { usd: prices[currency], at: now };
    },
  };
}
