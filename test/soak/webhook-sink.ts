import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The soak's webhook receiver: one path per merchant (/hooks/<index>). A
 * merchant in `failing(index, now)` gets 500 for every delivery while that
 * holds on the simulated clock (`now()`), so its deliveries go through the
 * retry schedule and catch up when the window ends.
 */
export interface WebhookSink {
  url(merchantIndex: number): string;
  delivered: number;
  refused: number;
  close(): Promise<void>;
}

export async function startWebhookSink(failing: (merchantIndex: number, now: Date) => boolean, now: () => Date): Promise<WebhookSink> {
  const sink = { delivered: 0, refused: 0 } as WebhookSink;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const index = Number(/^\/hooks\/(\d+)$/.exec(req.url ?? "")?.[1] ?? -1);
      if (index < 0) return void res.writeHead(404).end();
      if (failing(index, now())) {
        sink.refused += 1;
        return void res.writeHead(500).end();
      }
      sink.delivered += 1;
      res.writeHead(200).end("ok");
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  sink.url = (i) => `http://127.0.0.1:${port}/hooks/${i}`;
  sink.close = async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
  return sink;
}
