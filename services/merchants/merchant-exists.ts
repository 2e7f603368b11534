import type { Orm } from "../platform/database/orm.ts";
import { merchantExists } from "./merchant-store.ts";

const MAX_REMEMBERED = 10_000;

/**
 * For the RPC request check: does this merchant exist? Merchants are never
 * deleted, so a positive answer is remembered (bounded); an unknown id is
 * asked again each time (it may be created a moment later).
 */
export function merchantExistence(orm: Orm): (id: string) => Promise<boolean> {
  const known = new Set<string>();
  return async (id) => {
    if (known.has(id)) return true;
    if (!(await merchantExists(orm.em.fork().getConnection(), id))) return false;
    if (known.size >= MAX_REMEMBERED) known.delete(known.values().next().value!);
    known.add(id);
    return true;
  };
}
