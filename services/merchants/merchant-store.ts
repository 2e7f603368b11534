import type { EntityManager } from "@mikro-orm/postgresql";

type Connection = ReturnType<EntityManager["getConnection"]>;

/** The SQL of the merchants table. */

/** Whether a merchant with this id exists. */
export async function merchantExists(connection: Connection, id: string): Promise<boolean> {
  const rows = await connection.execute("select 1 from merchants where id = ?", [id]);
  return rows.length > 0;
}
