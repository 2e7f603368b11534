import { execFile, spawn, type ChildProcess } from "node:child_process";
import { chownSync, createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { eventually } from "./eventually.ts";
import { freePort } from "./redis-process.ts";

const run = promisify(execFile);

/**
 * A private highly available PostgreSQL, built from the Debian packages an
 * SRE would use (etcd-server, patroni, haproxy, postgresql-15): one etcd
 * member as Patroni's store, two Patroni nodes that initdb and stream in temp
 * dirs (synchronous replication: Patroni promotes only the synchronous
 * standby, so no acknowledged commit is lost), and HAProxy routing to
 * whichever node Patroni's REST API reports as primary. Everything on free
 * 127.0.0.1 ports; nothing of the machine's shared servers is touched, and
 * only the processes started here are ended.
 *
 * Timings are short for a test (ttl 10 s, loop_wait 1 s); production keeps
 * Patroni's defaults (ttl 30 s) unless it wants a faster, twitchier failover.
 */
export interface PatroniNode {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
  /** The Patroni process (running as the postgres user), until the node is killed. */
  patroni: ChildProcess | undefined;
}

export interface PatroniCluster {
  /** Server URL through HAProxy (the `postgres` database): what the processes use. */
  url: string;
  nodes: PatroniNode[];
  dir: string;
  /** The node Patroni reports as the running primary (asked of each node's REST API), if any. */
  primary(): Promise<PatroniNode | undefined>;
  /** Waits until one node is primary and the other streams as its synchronous standby. */
  waitHealthy(timeoutMs?: number): Promise<{ primary: PatroniNode; standby: PatroniNode }>;
  /** `kill -9` of a node as a machine loss: its Patroni agent, its postmaster and every backend. */
  killNode(node: PatroniNode): Promise<void>;
  /** Starts the Patroni agent of a killed node again: it rejoins as a standby (pg_rewind). */
  restartNode(node: PatroniNode): Promise<void>;
  /** Lines of every node's PostgreSQL log (data dir `log/`) that match `pattern`. */
  countInServerLogs(pattern: RegExp): number;
  /** `patronictl switchover`, the planned move: the primary is demoted to a standby and `candidate` promoted. */
  switchover(candidate: PatroniNode): Promise<void>;
  stop(): Promise<void>;
}

const BIN = "/usr/lib/postgresql/15/bin";

export async function startPatroniCluster(options: { logDir?: string } = {}): Promise<PatroniCluster> {
  for (const tool of ["etcd", "patroni", "haproxy"]) {
    if (
      !(await run("sh", ["-c", `command -v ${tool}`]).then(
        () => true,
        () => false,
      ))
    ) {
      throw new Error(`${tool} is missing: apt-get install -y patroni etcd-server etcd-client haproxy`);
    }
  }
  const dir = mkdtempSync(join(tmpdir(), "billing-patroni-"));
  const logDir = options.logDir ?? dir;
  const ids = await postgresIds();
  const own = (path: string) => ids && chownSync(path, ids.uid, ids.gid);
  own(dir);
  const scope = `billing-${randomBytes(4).toString("hex")}`;
  const children: ChildProcess[] = [];
  const startProcess = (name: string, command: string, args: string[], asPostgres: boolean): ChildProcess => {
    const out = createWriteStream(join(logDir, `${name}.log`), { flags: "a" });
    const child = spawn(command, args, {
      stdio: ["ignore", "pipe", "pipe"],
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, LANG: "C.UTF-8" },
      ...(asPostgres && ids ? { uid: ids.uid, gid: ids.gid } : {}),
    });
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    children.push(child);
    return child;
  };

  // ---- etcd: one member, the DCS Patroni keeps its leader key in
  const [etcdClient, etcdPeer] = [await freePort(), await freePort()];
  const etcdDir = join(dir, "etcd");
  startProcess(
    "etcd",
    "etcd",
    [
      "--name",
      "etcd1",
      "--data-dir",
      etcdDir,
      "--listen-client-urls",
      `http://127.0.0.1:${etcdClient}`,
      "--advertise-client-urls",
      `http://127.0.0.1:${etcdClient}`,
      "--listen-peer-urls",
      `http://127.0.0.1:${etcdPeer}`,
      "--initial-advertise-peer-urls",
      `http://127.0.0.1:${etcdPeer}`,
      "--initial-cluster",
      `etcd1=http://127.0.0.1:${etcdPeer}`,
      "--initial-cluster-token",
      scope,
      "--initial-cluster-state",
      "new",
    ],
    false,
  );
  await until("etcd answers", 20_000, async () => (await fetch(`http://127.0.0.1:${etcdClient}/health`)).ok);

  // ---- two Patroni nodes
  const nodes: PatroniNode[] = [];
  for (const name of ["node1", "node2"]) {
    nodes.push({ name, pgPort: await freePort(), restPort: await freePort(), dataDir: join(dir, name), patroni: undefined });
  }
  const configOf = (node: PatroniNode) => join(dir, `${node.name}.yml`);
  for (const node of nodes) {
    writeFileSync(configOf(node), patroniConfig({ scope, node, dir, etcd: `127.0.0.1:${etcdClient}` }));
    own(configOf(node));
  }
  const startAgent = (node: PatroniNode) => {
    node.patroni = startProcess(`patroni-${node.name}`, "patroni", [configOf(node)], true);
  };

  // ---- HAProxy: the one address of "the primary", from Patroni's health endpoint
  const proxyPort = await freePort();
  const haproxyConfig = join(dir, "haproxy.cfg");
  writeFileSync(haproxyConfig, haproxyConfigText(proxyPort, nodes));
  startProcess("haproxy", "haproxy", ["-f", haproxyConfig, "-db"], false);

  const rest = async (node: PatroniNode, path: string, init?: RequestInit, timeoutMs = 1_000): Promise<Response | undefined> =>
    fetch(`http://127.0.0.1:${node.restPort}${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) }).catch(() => undefined);

  const cluster: PatroniCluster = {
    url: `postgres://postgres@127.0.0.1:${proxyPort}/postgres`,
    nodes,
    dir,
    async primary() {
      for (const node of nodes) {
        if (!node.patroni) continue;
        if ((await rest(node, "/primary"))?.status === 200) return node;
      }
      return undefined;
    },
    async waitHealthy(timeoutMs = 90_000) {
      return until("a primary with a synchronous standby", timeoutMs, async () => {
        const primary = await cluster.primary();
        const standby = nodes.find((n) => n !== primary && n.patroni);
        if (!primary || !standby) return undefined;
        // /sync answers 200 on the synchronous standby only; it then streams from the primary.
        return (await rest(standby, "/sync"))?.status === 200 ? { primary, standby } : undefined;
      });
    },
    async killNode(node) {
      const postmaster = postmasterPid(node.dataDir);
      node.patroni?.kill("SIGKILL");
      node.patroni = undefined;
      // The postmaster runs in its own session (Patroni starts it with setsid): its group is every backend.
      if (postmaster) {
        for (const pid of [postmaster, ...descendants(postmaster)]) {
          try {
            process.kill(pid, "SIGKILL");
          } catch {
            // already gone
          }
        }
      }
    },
    countInServerLogs(pattern) {
      let count = 0;
      for (const node of nodes) {
        const logs = join(node.dataDir, "log");
        if (!existsSync(logs)) continue;
        for (const file of readdirSync(logs)) {
          count += readFileSync(join(logs, file), "utf8")
            .split("\n")
            .filter((line) => pattern.test(line)).length;
        }
      }
      return count;
    },
    async restartNode(node) {
      startAgent(node);
    },
    async switchover(candidate) {
      const primary = await cluster.primary();
      if (!primary) throw new Error("no primary to switch over from");
      const res = await rest(
        primary,
        "/switchover",
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ leader: primary.name, candidate: candidate.name }),
        },
        60_000,
      );
      if (!res || res.status !== 200) throw new Error(`switchover refused: ${res?.status} ${await res?.text()}`);
    },
    async stop() {
      for (const node of nodes) {
        const postmaster = postmasterPid(node.dataDir);
        node.patroni?.kill("SIGKILL");
        node.patroni = undefined;
        if (postmaster)
          for (const pid of [postmaster, ...descendants(postmaster)]) {
            try {
              process.kill(pid, "SIGKILL");
            } catch {
              // already gone
            }
          }
      }
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? undefined : new Promise((r) => c.once("exit", r)))));
      rmSync(dir, { recursive: true, force: true });
    },
  };

  try {
    // The first node bootstraps (initdb) and takes the leader key; the second then clones it with pg_basebackup.
    startAgent(nodes[0]!);
    await until("node1 primary", 60_000, async () => (await rest(nodes[0]!, "/primary"))?.status === 200);
    startAgent(nodes[1]!);
    await cluster.waitHealthy();
    await until("HAProxy routes to the primary", 20_000, async () => await haproxyRoutes(proxyPort));
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

function patroniConfig(options: { scope: string; node: PatroniNode; dir: string; etcd: string }): string {
  const { scope, node, dir, etcd } = options;
  // YAML written by hand: JSON is valid YAML, and keeps quoting exact.
  return JSON.stringify(
    {
      scope,
      namespace: "/billing-test/",
      name: node.name,
      log: { level: "INFO" },
      restapi: { listen: `127.0.0.1:${node.restPort}`, connect_address: `127.0.0.1:${node.restPort}` },
      etcd3: { hosts: [etcd] },
      bootstrap: {
        dcs: {
          // Leader key lifetime: a dead primary's key expires within ttl, then the standby takes it.
          ttl: 10,
          loop_wait: 1,
          retry_timeout: 4,
          maximum_lag_on_failover: 1_048_576,
          // Money: promote only the synchronous standby, so no commit a client saw is lost.
          synchronous_mode: true,
          postgresql: {
            use_pg_rewind: true,
            use_slots: true,
            parameters: {
              max_connections: 300,
              wal_level: "replica",
              hot_standby: "on",
              wal_log_hints: "on",
              max_wal_senders: 5,
              max_replication_slots: 5,
              wal_keep_size: "128MB",
              shared_buffers: "32MB",
              // A kill -9 of a process, not of the machine: the page cache survives, fsync buys nothing here.
              fsync: "off",
              full_page_writes: "on",
              // Each node's server log in its data dir (log/), where the suite counts refused writes.
              logging_collector: "on",
              log_filename: "postgresql.log",
            },
          },
        },
        initdb: [{ encoding: "UTF8" }, { locale: "C" }, { auth: "trust" }],
        pg_hba: ["local all all trust", "host replication replicator 127.0.0.1/32 trust", "host all all 127.0.0.1/32 trust"],
      },
      postgresql: {
        listen: `127.0.0.1:${node.pgPort}`,
        connect_address: `127.0.0.1:${node.pgPort}`,
        data_dir: node.dataDir,
        bin_dir: BIN,
        pgpass: join(dir, `pgpass-${node.name}`),
        authentication: {
          replication: { username: "replicator", password: "replicator-test" },
          superuser: { username: "postgres", password: "postgres-test" },
          rewind: { username: "postgres", password: "postgres-test" },
        },
        parameters: { unix_socket_directories: dir },
      },
      tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
    },
    null,
    2,
  );
}

function haproxyConfigText(port: number, nodes: PatroniNode[]): string {
  return [
    "global",
    "  maxconn 2000",
    "defaults",
    "  mode tcp",
    "  timeout connect 1s",
    // A refused connection is retried after min(timeout connect, 1 s): three retries (the default) held every new
    // connection about 3 s while a dead primary was not yet marked down; one keeps it near 1 s.
    "  retries 1",
    "  timeout client 30m",
    "  timeout server 30m",
    "  timeout check 1s",
    "listen primary",
    `  bind 127.0.0.1:${port}`,
    // Patroni answers 200 on /primary only on the running leader: a standby, or a node that lost its key, is down.
    "  option httpchk OPTIONS /primary",
    "  http-check expect status 200",
    // Sessions to a node marked down are cut, so no client keeps writing to a demoted node.
    "  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions",
    ...nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} maxconn 500 check port ${n.restPort}`),
    "",
  ].join("\n");
}

async function haproxyRoutes(port: number): Promise<boolean> {
  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`, connectionTimeoutMillis: 1_000 });
  client.on("error", () => {});
  try {
    await client.connect();
    const r = await client.query("select not pg_is_in_recovery() as primary");
    return r.rows[0]?.primary === true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function postmasterPid(dataDir: string): number | undefined {
  const file = join(dataDir, "postmaster.pid");
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, "utf8").split("\n")[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** Every process below `pid` (from /proc). */
function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parentOf.set(Number(entry), ppid);
    } catch {
      // exited meanwhile
    }
  }
  const found: number[] = [];
  let frontier = [pid];
  while (frontier.length) {
    const next = [...parentOf].filter(([, parent]) => frontier.includes(parent)).map(([child]) => child);
    found.push(...next);
    frontier = next;
  }
  return found;
}

/** `eventually`, where a check that throws (a node not answering yet) counts as "not yet". */
const until = <T>(what: string, timeoutMs: number, check: () => Promise<T | undefined | false>): Promise<T> =>
  eventually(() => check().catch(() => undefined), timeoutMs, what, 200);

async function postgresIds(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  return {
    uid: Number((await run("id", ["-u", "postgres"])).stdout.trim()),
    gid: Number((await run("id", ["-g", "postgres"])).stdout.trim()),
  };
}
