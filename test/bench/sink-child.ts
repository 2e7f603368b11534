/**
 * The webhook sink in its own process, as the baseline's: node:http answering
 * 200 to every POST at once. GET /stats answers { received, distinct } (by
 * webhook-id) for the correctness check, and when the first and the last
 * request arrived (firstAt, lastAt: Date.now()). Prints its port on stdout.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

const ids = new Set<string>();
let received = 0;
let firstAt = 0;
let lastAt = 0;
const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/stats") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ received, distinct: ids.size, firstAt, lastAt }));
    return;
  }
  req.on("data", () => {});
  req.on("end", () => {
    received += 1;
    lastAt = Date.now();
    if (received === 1) firstAt = lastAt;
    ids.add(String(req.headers["webhook-id"]));
    res.writeHead(200).end();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
