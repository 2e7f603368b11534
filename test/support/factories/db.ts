import type { TestSystem } from "../system.ts";

/**
 * Where a factory inserts: a test system, or anything with the same `sql`
 * (a transaction's entity manager, when the row must be part of one).
 */
export type Db = Pick<TestSystem, "sql">;
