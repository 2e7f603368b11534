import { eventually } from "./eventually.ts";
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";

/** A private redis-server on a free port, which a test may stop and start (never the shared one). */
export interface RedisProcess {
  url: string;
  port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startRedisProcess(): Promise<RedisProcess> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const answers = () =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.end("PING\r\n");
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
  const redis: RedisProcess = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      // No persistence: a restart comes back empty, the worst case for the queue.
      child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
      await eventually(answers, 10_000, "redis-server to start");
    },
    async stop() {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        c.once("exit", () => resolve());
        c.kill("SIGKILL");
      });
    },
  };
  await redis.start();
  return redis;
}
