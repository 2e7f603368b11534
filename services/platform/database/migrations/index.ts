import type { MigrationObject } from "@mikro-orm/core";
import { Migration0001Foundation } from "./0001-foundation.ts";

/**
 * Every migration, in order. Hand-written SQL, committed, run explicitly by
 * `billing migrate` (and by `npm start` for a developer), never schema.update().
 */
export const migrations: MigrationObject[] = [{ name: "0001-foundation", class: Migration0001Foundation }];
