import { randomUUID } from "node:crypto";
import type { Db } from "./db.ts";

/** A merchant row alone (no API key): for systems without the gateway, where the admin API is not there. */
export async function merchant(db: Db, traits: { name?: string } = {}): Promise<{ id: string }> {
  const id = randomUUID();
  await db.sql("insert into merchants (id, name, created_at) values (?, ?, now())", [id, traits.name ?? "Test merchant"]);
  return { id };
}
