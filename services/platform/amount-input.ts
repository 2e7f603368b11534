import { invalid } from "./errors.ts";
import { InvalidAmountError, isZero, parseAmount, type Amount } from "./money.ts";

/**
 * An amount from a request field: the spec's pattern and the storage bound,
 * failing as 400 INVALID_REQUEST naming the field. Use cases check this again
 * (after the gateway's schema) because internal callers reach them over RPC.
 */
export function parseAmountField(field: string, text: string, options: { positive?: boolean } = {}): Amount {
  let value: Amount;
  try {
    value = parseAmount(text);
  } catch (err) {
    if (err instanceof InvalidAmountError) throw invalid("INVALID_REQUEST", `${field}: ${err.message}`);
    throw err;
  }
  if (options.positive && isZero(value)) throw invalid("INVALID_REQUEST", `${field}: must be greater than 0`);
  return value;
}
