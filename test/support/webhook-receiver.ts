import { eventually } from "./eventually.ts";
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedWebhook {
  /** The request path (tests give each endpoint its own). */
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body, exactly as received (what a signature must be checked against). */
  body: string;
  receivedAt: number;
}

export interface ReceiverAnswer {
  status: number;
  /** Wait this long before answering (to exceed the sender's timeout). */
  delayMs?: number;
  body?: string;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** Decides the answer to each request; the default answers 200. */
  respond: (request: ReceivedWebhook, index: number) => ReceiverAnswer;
  /** Resolves when `predicate` holds for the requests received so far (polls; fails after timeoutMs). */
  waitFor(predicate: (received: ReceivedWebhook[]) => boolean, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 that records every request. */
export async function startWebhookReceiver(path = "/hooks"): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const receiver = {
    received,
    respond: (() => ({ status: 200 })) as WebhookReceiver["respond"],
  } as WebhookReceiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const request = { path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), receivedAt: Date.now() };
      const index = received.push(request) - 1;
      const answer = receiver.respond(request, index);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status, { "content-type": "text/plain" });
        res.end(answer.body ?? "ok");
      };
      if (answer.delayMs) {
        const t = setTimeout(() => {
          timers.delete(t);
          send();
        }, answer.delayMs);
        timers.add(t);
      } else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  receiver.port = port;
  receiver.url = `http://127.0.0.1:${port}${path}`;
  receiver.waitFor = (predicate, timeoutMs = 15_000) =>
    eventually(
      async () => predicate(received) && received,
      timeoutMs,
      () => `the receiver's condition (${received.length} received)`,
      25,
    );
  receiver.close = async () => {
    for (const t of timers) clearTimeout(t);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
