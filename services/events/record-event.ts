import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../platform/clock.ts";
import { Event, type EventRow } from "./entities.ts";
import type { EventType } from "./contract.ts";

/**
 * Adds an event to the unit of work of `em`. Call it inside the transaction
 * that makes the change: both commit together or neither does (outbox).
 */
export function recordEvent(
  em: EntityManager,
  clock: Clock,
  event: { merchantId: string; type: EventType; data: Record<string, unknown> },
): EventRow {
  return em.create(Event, {
    id: randomUUID(),
    merchantId: event.merchantId,
    type: event.type,
    data: event.data,
    createdAt: clock.now(),
    relayedAt: null,
  });
}
