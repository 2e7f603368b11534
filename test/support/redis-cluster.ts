import { eventually } from "./eventually.ts";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./redis-process.ts";

const run = promisify(execFile);

/** A private Redis Cluster (three masters, no replicas) on free local ports; stop() ends only these processes. */
export interface RedisCluster {
  /** host:port of every master (REDIS_CLUSTER_NODES). */
  nodes: string[];
  stop(): Promise<void>;
}

export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const dir = await mkdtemp(join(tmpdir(), "billing-redis-cluster-"));
  const children: ChildProcess[] = [];
  const nodes: string[] = [];
  const stop = async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null) return resolve();
            c.once("exit", () => resolve());
            c.kill("SIGKILL");
          }),
      ),
    );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freePort();
      const child = spawn(
        "redis-server",
        [
          "--port",
          String(port),
          "--bind",
          "127.0.0.1",
          "--cluster-enabled",
          "yes",
          "--cluster-config-file",
          join(dir, `nodes-${port}.conf`),
          "--dir",
          dir,
          "--save",
          "",
          "--appendonly",
          "no",
        ],
        { stdio: "ignore" },
      );
      children.push(child);
      nodes.push(`127.0.0.1:${port}`);
    }
    for (const node of nodes) await waitFor(async () => (await cli(node, "ping")).trim() === "PONG", `${node} to start`);
    await run("redis-cli", ["--cluster", "create", ...nodes, "--cluster-replicas", "0", "--cluster-yes"]);
    for (const node of nodes) await waitFor(async () => (await cli(node, "cluster", "info")).includes("cluster_state:ok"), `${node} to join`);
    return { nodes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function cli(node: string, ...args: string[]): Promise<string> {
  const [host, port] = node.split(":") as [string, string];
  return run("redis-cli", ["-h", host, "-p", port, ...args]).then(
    (r) => r.stdout,
    () => "",
  );
}

const waitFor = (check: () => Promise<boolean>, what: string) => eventually(check, 15_000, what, 100);
