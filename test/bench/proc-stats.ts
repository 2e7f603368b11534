import { readdir, readFile } from "node:fs/promises";

/** What the benches read of the machine and its processes from /proc (Linux): CPU time and resident memory. */

/**
 * The fields of /proc/<pid>/stat after the command, whose name may hold spaces: utime [11], stime [12] and the
 * reaped children's cutime [13], cstime [14] (fields 14–17 of stat), in clock ticks. Undefined once the process is gone.
 */
async function statFields(pid: number | string): Promise<string[] | undefined> {
  return (await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")).split(") ")[1]?.split(" ");
}

/** Every process whose /proc/<pid>/`file` (comm or cmdline) passes `test`, as its pid. */
async function processesWhere(file: "comm" | "cmdline", test: (text: string) => boolean): Promise<string[]> {
  const matched: string[] = [];
  for (const pid of await readdir("/proc")) {
    if (/^\d+$/.test(pid) && test(await readFile(`/proc/${pid}/${file}`, "utf8").catch(() => ""))) matched.push(pid);
  }
  return matched;
}

const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); undefined elsewhere. */
export async function cpuSeconds(pid: number): Promise<number | undefined> {
  const fields = await statFields(pid);
  return fields && (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/**
 * CPU seconds of PostgreSQL's backends connected to `database` now (from /proc, Linux; the backend's title names its
 * database): the work of this bench's processes alone, on a server other sessions share. A backend that exits
 * meanwhile takes its time with it: read it over a window where the pools keep their connections.
 */
export async function databaseCpuSeconds(database: string): Promise<number> {
  let total = 0;
  for (const pid of await processesWhere("cmdline", (title) => title.startsWith("postgres:") && title.includes(` ${database} `))) {
    total += (await cpuSeconds(Number(pid))) ?? 0;
  }
  return total;
}

/**
 * CPU seconds of every process named `name` (PostgreSQL, or redis-server), those gone included: a backend a pool
 * closed during the round is counted through its parent, whose cutime/cstime hold the CPU of the children it reaped
 * (the postmaster reaps every backend). Summing only the live ones undercounted PostgreSQL 13× (0.21 against 2.77 ms per renewal) in a round whose
 * pools recycled connections.
 */
export async function cpuOfAll(name: string): Promise<number> {
  let total = 0;
  for (const pid of await processesWhere("comm", (comm) => comm.trim() === name)) {
    const fields = await statFields(pid);
    if (fields) total += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
  }
  return total;
}

/** The whole machine's CPU time so far, busy and in all, in clock ticks (/proc/stat, Linux): its busy share over a window. */
export async function machineCpuTicks(): Promise<{ busy: number; total: number }> {
  const [, ...ticks] = (await readFile("/proc/stat", "utf8")).split("\n", 1)[0]!.trim().split(/\s+/).map(Number);
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
  // idle and iowait are the machine waiting; the rest (user, nice, system, irq, softirq, steal) is busy.
  return { busy: total - ticks[3]! - ticks[4]!, total };
}

/** A process's resident memory now and at its peak (VmRSS, VmHWM), in MiB, from /proc (Linux). */
export async function residentMib(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rss: Math.round(kib("VmRSS") / 1024), peak: Math.round(kib("VmHWM") / 1024) };
}
