import pg from "pg";
import type { Logger } from "../logger.ts";

export interface Listening {
  close(): Promise<void>;
}

/**
 * LISTENs on a Postgres channel on its own connection and calls `onNotify`
 * for each notification. A lost connection is re-opened after a second (and
 * `onNotify` is called once then, since notifications sent meanwhile are
 * gone). A poke only: whatever the listener does must also happen without it.
 */
export function listenForNotifications(databaseUrl: string, channel: string, onNotify: () => void, logger: Logger): Listening {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`bad channel name ${channel}`);
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async () => {
    if (closed) return;
    const c = new pg.Client({ connectionString: databaseUrl });
    client = c;
    c.on("notification", () => onNotify());
    c.on("error", (err) => {
      logger.warn({ err: err.message, channel }, "notification listener lost its connection");
      schedule();
    });
    try {
      await c.connect();
      await c.query(`listen ${channel}`);
      if (closed) await c.end().catch(() => {});
      else onNotify();
    } catch (err) {
      logger.warn({ err: (err as Error).message, channel }, "notification listener could not connect");
      schedule();
    }
  };
  const schedule = () => {
    if (closed || retry) return;
    const old = client;
    client = undefined;
    void old?.end().catch(() => {});
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, 1000);
    retry.unref();
  };
  void connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
}
