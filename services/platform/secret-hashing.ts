import { hash, verify, type Algorithm } from "@node-rs/argon2";

/**
 * Passwords and PINs are stored as argon2id hashes (PHC strings carry the salt
 * and parameters). Parameters are OWASP's minimum for argon2id: 19 MiB, 2
 * passes, 1 lane (~20-40 ms here). A six-digit PIN has only 10^6 values, so
 * its real protection is the lockout (verify-pin.ts); the slow hash makes an
 * offline search of a leaked table cost something.
 */
const ARGON2ID = 2 as Algorithm;
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19456, timeCost: 2, parallelism: 1 };

export function hashSecret(secret: string): Promise<string> {
  return hash(secret, OPTIONS);
}

export async function verifySecret(stored: string, secret: string): Promise<boolean> {
  try {
    return await verify(stored, secret);
  } catch {
    // A malformed stored hash is a mismatch, never a crash that reveals which user exists.
    return false;
  }
}

/** An argon2id hash with the same parameters, of a secret nobody knows (only its cost matters). */
const DUMMY_HASH = "$argon2id$v=19$m=19456,t=2,p=1$93Ieo+xWtVE6rkcgl4oDXQ$FUXLWjfT/Wzp9ZKNJAPOfiqp7Onm+RlOcQhqRB9E+Z0";

/**
 * Verifies against the dummy hash, so an unknown email costs the same time as
 * a wrong password (no user enumeration by timing).
 */
export async function burnVerifyTime(secret: string): Promise<void> {
  await verifySecret(DUMMY_HASH, secret);
}
