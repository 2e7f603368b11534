import { Secret, TOTP } from "otpauth";

/**
 * RFC 6238 codes as every authenticator app makes them: SHA-1, 6 digits,
 * 30-second steps. One step either side is accepted (clock drift); the step a
 * code belongs to is returned so the caller can refuse that step (and older
 * ones) afterwards: a code works once. TOTP is wall-clock by nature (the
 * phone's clock), so it reads the real time, not the service clock the
 * sandbox can move.
 */
const TOTP_PERIOD_SECONDS = 30;
const ISSUER = "Billing dashboard";

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

const totpOf = (secret: string, label: string) =>
  new TOTP({ issuer: ISSUER, label, algorithm: "SHA1", digits: 6, period: TOTP_PERIOD_SECONDS, secret: Secret.fromBase32(secret) });

export function totpUri(secret: string, email: string): string {
  return totpOf(secret, email).toString();
}

/** The time-step of a valid code, or undefined. */
export function matchingStep(secret: string, code: string, nowMs: number = Date.now()): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = totpOf(secret, "").validate({ token: code, timestamp: nowMs, window: 1 });
  if (delta === null) return undefined;
  return Math.floor(nowMs / 1000 / TOTP_PERIOD_SECONDS) + delta;
}
