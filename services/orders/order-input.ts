import { invalid } from "../platform/errors.ts";
import { compare, parseAmount, type Amount } from "../platform/money.ts";
import { parseAmountField } from "../platform/amount-input.ts";
import { CONFIRMATIONS_MAX, EXPIRES_IN_MINUTES } from "./contract.ts";

/**
 * Input rules of payment orders. The gateway checks the same rules with JSON
 * schemas; internal callers reach the service over RPC directly, so the use
 * cases check again. Messages name the field as it is spelled on REST.
 */
const EXTERNAL_ID_MAX = 200;
export { CONFIRMATIONS_MAX };
const TOLERANCE_PERCENT_MAX = "10";
export const TX_ID_MAX = 200;
export const ADDRESS_MAX = 128;

/** No control characters: these references end up in URLs, logs and CSV exports. */
const PRINTABLE = /^[^\u0000-\u001f\u007f]+$/;

export const isReference = (value: string): boolean => !!value && value.length <= EXTERNAL_ID_MAX && PRINTABLE.test(value);

export function checkReference(field: string, value: string): string {
  if (!isReference(value)) {
    throw invalid("INVALID_REQUEST", `${field}: must be 1 to ${EXTERNAL_ID_MAX} characters without control characters`);
  }
  return value;
}

export function parsePositiveAmount(field: string, text: string): Amount {
  return parseAmountField(field, text, { positive: true });
}

export function checkExpiresInMinutes(value: number): number {
  if (value === 0) return EXPIRES_IN_MINUTES.default;
  if (!Number.isInteger(value) || value < EXPIRES_IN_MINUTES.min || value > EXPIRES_IN_MINUTES.max) {
    throw invalid("INVALID_REQUEST", `expiresInMinutes: must be an integer from ${EXPIRES_IN_MINUTES.min} to ${EXPIRES_IN_MINUTES.max}`);
  }
  return value;
}

export function parseTolerancePercent(text: string | undefined): Amount {
  if (text === undefined || text === "") return parseAmount("0");
  if (!/^\d{1,2}(\.\d{1,2})?$/.test(text) || compare(parseAmount(text), parseAmount(TOLERANCE_PERCENT_MAX)) > 0) {
    throw invalid("INVALID_REQUEST", `underpaymentTolerancePercent: must be a decimal from 0 to ${TOLERANCE_PERCENT_MAX} with at most 2 fraction digits`);
  }
  return parseAmount(text);
}
