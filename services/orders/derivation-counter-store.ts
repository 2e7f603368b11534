import type { EntityManager } from "@mikro-orm/postgresql";

type Connection = ReturnType<EntityManager["getConnection"]>;

/**
 * Takes the next child index of a deposit key from its counter row, in one
 * autocommit statement (`insert … on conflict do update … returning`), so
 * Postgres serialises concurrent callers on the counter row only for that
 * statement. The check constraint stops the counter past the last
 * non-hardened index (2^31 - 1): the statement then fails.
 */
export async function takeNextDerivationIndex(connection: Connection, keyId: string): Promise<number> {
  const rows = await connection.execute<{ index: string }[]>(
    `insert into address_derivation_counters (key_id, next_index) values (?, 1)
       on conflict (key_id) do update set next_index = address_derivation_counters.next_index + 1
       returning next_index - 1 as index`,
    [keyId],
  );
  return Number(rows[0]!.index);
}
