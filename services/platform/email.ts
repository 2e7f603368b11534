import { invalid } from "./errors.ts";

/** The longest address SMTP carries (RFC 5321 path limit). */
export const EMAIL_MAX = 254;

/** local@domain.tld, deliberately permissive: deliverability is the mail system's job. Shared with the gateway's schemas. */
export const EMAIL_PATTERN = "[^\\s@]+@[^\\s@.]+(\\.[^\\s@.]+)+";
const EMAIL = new RegExp(`^${EMAIL_PATTERN}$`);

/**
 * The one rule for an email, wherever one is sent (a subscription's
 * customerEmail, a wallet user's email, a login): surrounding spaces are
 * trimmed, the one change ever made to an email (documented in docs/merchant-api.md;
 * they are a copy-and-paste accident, never part of an address), then it must
 * be local@domain.tld of at most 254 characters, else INVALID_REQUEST naming
 * the field. Case is kept: emails are compared case-insensitively (emailKey).
 */
export function parseEmail(field: string, text: string): string {
  const email = text.trim();
  // Both forms must fit the columns (varchar(254)): lower-casing can lengthen a string ("İ" → "i̇").
  const length = Math.max([...email].length, [...emailKey(email)].length);
  if (length > EMAIL_MAX || !EMAIL.test(email)) {
    throw invalid("INVALID_REQUEST", `${field}: must be an email address (local@domain.tld) of at most ${EMAIL_MAX} characters`);
  }
  return email;
}

/** The form two emails are compared in: equal keys are the same address. */
export const emailKey = (email: string): string => email.toLowerCase();
