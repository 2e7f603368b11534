import { invalid } from "../platform/errors.ts";
import { emailKey, parseEmail } from "../platform/email.ts";
import { isUuid } from "../platform/ids.ts";
import { fractionDigits, type Amount } from "../platform/money.ts";
import { parseAmountField } from "../platform/amount-input.ts";
import { ASSET_CODES, findAsset, type AssetInfo } from "./assets.ts";

/**
 * Input rules of the wallet's verbs. The gateway checks the same rules with
 * JSON schemas; internal callers reach the service over RPC directly, so the
 * use cases check again. Messages name the field (camelCase, as on REST).
 */
/**
 * Users are created by operators (and their own sign-up flows), which own the
 * password policy; the service only needs a non-empty secret it can hash.
 */
import { PASSWORD_MAX, PASSWORD_MIN } from "./contract.ts";

export { PASSWORD_MAX };
const IDEMPOTENCY_KEY_MAX = 200;
const DESCRIPTION_MAX = 500;

/**
 * A wallet user's email as the wallet stores and looks it up: the platform's
 * one email rule (trimmed), in its comparison form (lower case), since the
 * address is the user's unique login name.
 */
export const walletEmail = (email: string): string => emailKey(parseEmail("email", email));

export function checkPassword(password: string): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
    throw invalid("INVALID_REQUEST", `password: must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
  }
}

export function checkPin(pin: string): void {
  if (!/^\d{6}$/.test(pin)) throw invalid("INVALID_REQUEST", "pin: must be exactly 6 digits");
}

export function requireAsset(code: string, field = "asset"): AssetInfo {
  const asset = findAsset(code);
  if (!asset) throw invalid("INVALID_REQUEST", `${field}: must be one of ${ASSET_CODES.join(", ")}`);
  return asset;
}

export function requireUuid(field: string, value: string): string {
  if (!isUuid(value)) throw invalid("INVALID_REQUEST", `${field}: must be a uuid`);
  return value.toLowerCase();
}

/** A positive amount of `asset`, exact to its decimals: more fraction digits than the asset has is refused, not rounded. */
export function parseAssetAmount(field: string, text: string, asset: AssetInfo): Amount {
  const value = parseAmountField(field, text, { positive: true });
  if (fractionDigits(value) > asset.decimals) {
    throw invalid("INVALID_REQUEST", `${field}: ${asset.code} has ${asset.decimals} decimals; at most ${asset.decimals} fraction digits are allowed`);
  }
  return value;
}

export function checkIdempotencyKey(key: string, required: boolean): string | undefined {
  if (!key) {
    if (required) throw invalid("INVALID_REQUEST", "idempotencyKey: is required");
    return undefined;
  }
  if (key.length > IDEMPOTENCY_KEY_MAX) throw invalid("INVALID_REQUEST", `idempotencyKey: must be at most ${IDEMPOTENCY_KEY_MAX} characters`);
  return key;
}

export function checkDescription(description: string | undefined): string | null {
  if (!description) return null;
  if (description.length > DESCRIPTION_MAX) throw invalid("INVALID_REQUEST", `description: must be at most ${DESCRIPTION_MAX} characters`);
  return description;
}
