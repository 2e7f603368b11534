import { readFileSync } from "node:fs";
import { invalid } from "../../platform/errors.ts";
import { characterCount } from "../../platform/text.ts";
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from "./contract.ts";

/** The shipped list (common-passwords.txt says where it comes from), read once. */
const COMMON = new Set(
  readFileSync(new URL("./common-passwords.txt", import.meta.url), "utf8")
    .split("\n")
    .map((line) => line.trim().toLowerCase())
    .filter((line) => line && !line.startsWith("#")),
);

/**
 * NIST SP 800-63B's rule: a length floor and a check against known-common
 * passwords, no composition rules. Besides exact matches, a common word with
 * digits or symbols around it, a repeated word and a password of fewer than
 * 5 distinct characters are refused.
 */
export function passwordProblem(password: string, email: string): string | undefined {
  const length = characterCount(password);
  if (length < MIN_PASSWORD_LENGTH) return `Use at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (length > MAX_PASSWORD_LENGTH) return `Use at most ${MAX_PASSWORD_LENGTH} characters.`;
  const lower = password.toLowerCase();
  const core = lower.replace(/^[^a-z]+|[^a-z]+$/g, "");
  const repeated = /^(.+?)\1+$/.exec(lower)?.[1];
  if (COMMON.has(lower) || COMMON.has(core) || (repeated !== undefined && (COMMON.has(repeated) || repeated.length < 5))) {
    return "This password is too common. Choose another one.";
  }
  if (new Set(lower).size < 5) return "This password is too easy to guess. Choose another one.";
  const local = email.toLowerCase().split("@")[0] ?? "";
  if (local.length >= 4 && lower.includes(local)) return "Do not use your email address in your password.";
  return undefined;
}

export function checkPassword(password: string, email: string): void {
  const problem = passwordProblem(password, email);
  if (problem) throw invalid("WEAK_PASSWORD", problem);
}
