import { emailKey, parseEmail } from "../../platform/email.ts";

/**
 * A member's email as stored and looked up: the platform's one email rule
 * (trimmed, local@domain.tld, at most 254 characters, else INVALID_REQUEST),
 * in its comparison form (lower case), as the wallet does (wallet-input.ts).
 */
export const memberEmail = (email: string): string => emailKey(parseEmail("email", email));
