import DataLoader from "dataloader";
import type pg from "pg";
import type { EntityManager } from "@mikro-orm/postgresql";
import { poolOf, runPrepared, statementFor } from "./prepared.ts";

/**
 * A read by key whose calls of one event-loop turn run as one statement.
 *
 * Why: under load many GETs of the same kind are in flight at once (the
 * gateway's Redis answers resolve them in the same turn). One statement for
 * all of them costs PostgreSQL one execution instead of one each, and the
 * process one socket write and one result instead of one per request.
 * DataLoader (the GraphQL project's batching library) gathers the keys; its
 * cache is off (every call reads the database afresh; nothing is kept
 * between turns), and the batch is dispatched with `setImmediate`, after the
 * I/O callbacks of the turn, so requests read from different sockets in one
 * turn share it. A batch's failure is each caller's failure, as if each had
 * run its own statement.
 *
 * `load` gets the keys (at most MAX_BATCH) and answers one value per key in
 * the same order, `undefined` for none. Reads run outside any transaction
 * (autocommit, on the ORM's pool, as the ORM's own reads outside
 * `transactional`) and are refused inside one, whose writes they would not
 * see. Keys must be valid before they are read (ids checked with isUuid): a
 * key the statement refuses would fail every caller of its batch.
 */
interface BatchedRead<K, R> {
  readonly name: string;
  load(em: EntityManager, pool: pg.Pool, keys: readonly K[]): Promise<(R | undefined)[]>;
}

export const MAX_BATCH = 100;

/** Per ORM (its connection, shared by every fork): the loader of each read, by name. */
const loadersByOrm = new WeakMap<object, Map<string, DataLoader<unknown, unknown>>>();

export async function readBatched<K, R>(em: EntityManager, read: BatchedRead<K, R>, key: K): Promise<R | undefined> {
  if (em.isInTransaction()) throw new Error(`batched read ${read.name} inside an ORM transaction`);
  const pool = await poolOf(em);
  const connection = em.getConnection();
  let loaders = loadersByOrm.get(connection);
  if (!loaders) loadersByOrm.set(connection, (loaders = new Map()));
  let loader = loaders.get(read.name) as DataLoader<K, R | undefined> | undefined;
  if (!loader) {
    // A fork of its own: the statements need the ORM's metadata, never the first caller's entity manager.
    const orm = em.fork();
    loader = new DataLoader<K, R | undefined>((keys) => read.load(orm, pool, keys), {
      cache: false,
      maxBatchSize: MAX_BATCH,
      batchScheduleFn: (dispatch) => setImmediate(dispatch),
    });
    loaders.set(read.name, loader as DataLoader<unknown, unknown>);
  }
  return loader.load(key);
}

/** The key of a read by id: the row's id and, for rows that belong to someone (a merchant), its owner. */
interface IdKey {
  id: string;
  owner?: string;
}

/**
 * The usual batched read: rows by primary key, `text` selecting them
 * `where <alias>.id = any($1::uuid[])` (and, with `ownerProperty`,
 * `<owner column> = any($2::uuid[])`). Each row answers the keys with its id
 * and, with `ownerProperty`, only those whose owner is the row's: another
 * merchant's id is missing even when both are read in one batch.
 */
export function readByIds<R extends object>(name: string, text: (em: EntityManager) => string, ownerProperty?: keyof R & string): BatchedRead<IdKey, R> {
  return {
    name,
    async load(em, pool, keys) {
      const statement = statementFor(em, name, () => text(em));
      // PostgreSQL reads a uuid in any case and answers it in lower case: keys are matched the same way.
      const ids = keys.map((k) => k.id.toLowerCase());
      const owners = keys.map((k) => k.owner?.toLowerCase());
      const rows = await runPrepared<R>(pool, statement, ownerProperty ? [ids, owners] : [ids]);
      const byId = new Map(rows.map((r) => [(r as { id: string }).id, r]));
      return keys.map((_, i) => {
        const row = byId.get(ids[i]!);
        return row && (!ownerProperty || row[ownerProperty] === owners[i]) ? row : undefined;
      });
    },
  };
}
