import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "./clock.ts";

/**
 * What every use case receives: an entity manager scoped to this call (a fork,
 * never the global one) and the clock.
 */
export interface UseCaseContext {
  em: EntityManager;
  clock: Clock;
}
