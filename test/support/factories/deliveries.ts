import { randomUUID } from "node:crypto";
import type { Db } from "./db.ts";

export interface DeliveryTraits {
  merchantId: string;
  endpointId: string;
  eventId: string;
  /** The event's time: the delivery is made then (and a PENDING one is due then). */
  eventAt: Date;
  status?: "PENDING" | "SUCCEEDED" | "FAILED";
  id?: string;
}

/** A webhook delivery of an event to an endpoint. */
export async function delivery(db: Db, traits: DeliveryTraits): Promise<{ id: string }> {
  const { status = "PENDING", eventAt } = traits;
  const id = traits.id ?? randomUUID();
  await db.sql(
    `insert into webhook_deliveries (id, merchant_id, event_id, endpoint_id, event_seq, status, next_attempt_at, created_at, updated_at, event_created_at)
     values (?, ?, ?, ?, 0, ?, ?, ?, ?, ?)`,
    [id, traits.merchantId, traits.eventId, traits.endpointId, status, status === "PENDING" ? eventAt : null, eventAt, eventAt, eventAt],
  );
  return { id };
}

export interface DeliveryAttemptTraits {
  deliveryId: string;
  endpointId: string;
  eventId: string;
  eventAt: Date;
  outcome?: "SUCCEEDED" | "FAILED";
}

/** The first attempt of a delivery, made at the event's time. */
export async function deliveryAttempt(db: Db, traits: DeliveryAttemptTraits): Promise<{ id: string }> {
  const id = randomUUID();
  await db.sql(
    `insert into webhook_delivery_attempts (id, delivery_id, endpoint_id, event_id, attempt_number, attempted_at, outcome, event_created_at)
     values (?, ?, ?, ?, 1, ?, ?, ?)`,
    [id, traits.deliveryId, traits.endpointId, traits.eventId, traits.eventAt, traits.outcome ?? "FAILED", traits.eventAt],
  );
  return { id };
}
