import { Session } from "node:inspector/promises";
import { writeFile } from "node:fs/promises";
import pg from "pg";

/**
 * With BENCH_PROFILE=<file prefix>, records a CPU profile of this process
 * (the service, all-in-one) over a measured window only, not the seeding:
 * `<prefix>-<name>.cpuprofile`, readable in Chrome DevTools. With
 * BENCH_PG_COUNT=1, prints the SQL statements this process sent in the
 * window, counted by shape (their first 70 characters), most frequent first:
 * on a shared machine the number of round trips is steadier than any time.
 * With BENCH_PG_STATEMENTS=1, resets pg_stat_statements at the window's start
 * and prints the statements that took the most time in it (the server of
 * DATABASE_URL must load the extension: a private cluster, not the shared one).
 * Without any of them, nothing.
 */
export async function profileWindow(name: string): Promise<() => Promise<void>> {
  const stopCount = process.env.BENCH_PG_COUNT ? countStatements(name) : () => {};
  const stopStatements = process.env.BENCH_PG_STATEMENTS ? await statementTimes(name) : async () => {};
  const prefix = process.env.BENCH_PROFILE;
  if (!prefix)
    return async () => {
      stopCount();
      await stopStatements();
    };
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    stopCount();
    await stopStatements();
    await writeFile(`${prefix}-${name}.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
  };
}

/** Counts pg queries by shape until the returned function is called, which prints them to stderr. */
function countStatements(name: string): () => void {
  const counts = new Map<string, number>();
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0];
    const text = typeof q === "string" ? q : ((q as { text?: string } | undefined)?.text ?? "?");
    const shape = text.replace(/\s+/g, " ").trim().slice(0, 70);
    counts.set(shape, (counts.get(shape) ?? 0) + 1);
    return original.apply(this, args);
  };
  return () => {
    proto.query = original;
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    const lines = [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 40)
      .map(([s, n]) => `${String(n).padStart(8)}  ${s}`);
    process.stderr.write(`[bench] ${name}: ${total} statements in the window\n${lines.join("\n")}\n`);
  };
}

/** pg_stat_statements over the window: reset now; the returned function prints the top statements by total time. */
async function statementTimes(name: string): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  await client.query("select pg_stat_statements_reset()");
  return async () => {
    const [sum] = (
      await client.query(
        `select sum(calls)::bigint as calls, round(sum(total_exec_time))::bigint as total_ms, round(sum(total_plan_time))::bigint as plan_ms, sum(shared_blks_hit + shared_blks_read)::bigint as blocks,
                sum(shared_blks_dirtied)::bigint as dirtied, pg_size_pretty(sum(wal_bytes)) as wal,
                sum(jit_functions)::bigint as jit_functions, round(sum(jit_generation_time + jit_inlining_time + jit_optimization_time + jit_emission_time))::bigint as jit_ms
           from pg_stat_statements`,
      )
    ).rows;
    const { rows } = await client.query(
      `select calls, round(total_exec_time)::int as total_ms, round((total_exec_time / nullif(calls, 0))::numeric, 2) as mean_ms, round(total_plan_time)::int as plan_ms, rows,
              shared_blks_hit + shared_blks_read as blocks, regexp_replace(query, '\\s+', ' ', 'g') as query
         from pg_stat_statements order by total_exec_time desc limit 30`,
    );
    await client.end();
    const lines = rows.map(
      (r) =>
        `${String(r.total_ms).padStart(8)} ms ${String(r.plan_ms).padStart(6)} ms planning ${String(r.calls).padStart(7)} calls ${String(r.mean_ms).padStart(9)} ms/call ${String(r.rows).padStart(8)} rows ${String(r.blocks).padStart(9)} blks  ${String(r.query).slice(0, 220)}`,
    );
    process.stderr.write(
      `[bench] ${name}: in all ${sum.calls} statements, ${sum.total_ms} ms (and ${sum.plan_ms} ms planning, where pg_stat_statements.track_planning is on), ${sum.blocks} blocks read or hit, ${sum.dirtied} dirtied, WAL ${sum.wal}, JIT ${sum.jit_functions} functions compiled in ${sum.jit_ms} ms\n` +
        `[bench] ${name}: statements by time in the window\n${lines.join("\n")}\n`,
    );
  };
}
