import type { EntityManager } from "@mikro-orm/postgresql";
import { DomainError } from "../platform/errors.ts";
import { takeNextDerivationIndex } from "./derivation-counter-store.ts";

/**
 * Hands out the next child index of a deposit key. One autocommit statement
 * (`insert … on conflict do update … returning`), so Postgres serialises
 * concurrent callers on the counter row only for that statement: no index is
 * ever returned twice, whatever the concurrency, and the row lock is not held
 * for the rest of the create. Like a sequence, an index whose create later
 * fails is skipped, never reused. Must not run inside a transaction.
 */
export async function allocateDerivationIndex(em: EntityManager, keyId: string): Promise<number> {
  try {
    return await takeNextDerivationIndex(em.getConnection(), keyId);
  } catch (err) {
    // The check constraint stops the counter past the last non-hardened index (2^31 - 1).
    if ((err as { code?: string }).code === "23514" || /check constraint/i.test(String((err as Error).message))) {
      throw new DomainError("unavailable", "DEPOSIT_ADDRESSES_EXHAUSTED", `every deposit address of key ${keyId} has been used; configure a new key`, {
        cause: err,
      });
    }
    throw err;
  }
}
