import { DomainError } from "./errors.ts";

/** One legal move: in status `from`, `event` leads to `to`. */
export interface Move<S extends string, E extends string, T extends string = S> {
  readonly from: S;
  readonly event: E;
  readonly to: T;
}

/**
 * A status machine: the one table of an aggregate's legal moves, and what
 * every caller asks of it. Single-row code asks `next` under the row's lock;
 * set-based SQL builds its `status in (…)` from `statesFrom(event)`, so a
 * sweep can never move a row the table does not allow to move. The docs and
 * the OpenAPI enums are checked against `statuses` and `moves`
 * (test/docs/status-machines.test.ts).
 */
export interface StatusMachine<S extends string, E extends string, T extends string = S> {
  /** Named in the error a refused move answers ("subscription", "payout", …). */
  readonly name: string;
  readonly statuses: readonly S[];
  readonly moves: readonly Move<S, E, T>[];
  /** Where `event` leads from `from`; InvalidStatusTransitionError (409) when the table has no such move. */
  next(from: string, event: E): T;
  can(from: string, event: E): boolean;
  /** Every status `event` may leave, in table order. */
  statesFrom(event: E): S[];
  /** Statuses no move leaves for another status. */
  readonly terminal: readonly S[];
}

/** The one failure of an illegal move, on every machine: 409 INVALID_STATUS_TRANSITION naming the machine. */
export class InvalidStatusTransitionError extends DomainError {
  readonly machine: string;
  readonly from: string;
  readonly event: string;

  constructor(machine: string, from: string, event: string, message: string) {
    super("failed_precondition", "INVALID_STATUS_TRANSITION", message);
    this.machine = machine;
    this.from = from;
    this.event = event;
  }
}

/**
 * `describe` words the refusal for the caller ("cannot pause a subscription
 * in status CANCELLED" by default, with the event's underscores as spaces).
 */
export function defineStatusMachine<S extends string, E extends string, T extends string = S>(
  name: string,
  statuses: readonly S[],
  moves: readonly Move<S, E, T>[],
  describe: (from: string, event: E) => string = (from, event) => `cannot ${event.replace(/_/g, " ")} a ${name} in status ${from}`,
): StatusMachine<S, E, T> {
  for (const move of moves) {
    if (!statuses.includes(move.from)) throw new Error(`${name} machine: unknown status ${move.from}`);
  }
  const find = (from: string, event: E) => moves.find((m) => m.from === from && m.event === event);
  return {
    name,
    statuses,
    moves,
    next(from, event) {
      const move = find(from, event);
      if (!move) throw new InvalidStatusTransitionError(name, from, event, describe(from, event));
      return move.to;
    },
    can: (from, event) => find(from, event) !== undefined,
    statesFrom: (event) => [...new Set(moves.filter((m) => m.event === event).map((m) => m.from))],
    terminal: statuses.filter((s) => !moves.some((m) => m.from === s && (m.to as string) !== s)),
  };
}

/** The machine as the Markdown table the docs show (from | event | to), so docs and code can be compared. */
export function markdownTable(machine: StatusMachine<string, string, string>): string {
  const rows = machine.moves.map((m) => `| ${m.from} | ${m.event} | ${m.to} |`);
  return ["| from | event | to |", "|---|---|---|", ...rows].join("\n");
}

/**
 * `'A'`: one status named in SQL text, checked against the statuses the
 * column may hold when the calling module loads, so a renamed or removed
 * status fails at start rather than matching no row. `statuses` is a
 * machine's (`machine.statuses`; from another domain, the contract list the
 * machine is built on, since its machine is that domain's internals), or the
 * list of a table without a machine. Same quoting as statusIn, so a
 * statement's text stays byte for byte what it was.
 */
export function sqlStatus<S extends string>(statuses: readonly S[], status: NoInfer<S>): string {
  if (!statuses.includes(status)) throw new Error(`sqlStatus: ${status} is not one of ${statuses.join(",")}`);
  return quoted(status);
}

/**
 * `column in ('A', 'B')` for set-based SQL, from a machine's statuses (code
 * constants, checked to be plain names, so the literal is safe to inline:
 * the planner then sees the partial indexes' own predicates).
 */
export function statusIn(column: string, statuses: readonly string[]): string {
  if (statuses.length === 0) throw new Error("statusIn: no statuses");
  return `${column} in (${statuses.map(quoted).join(", ")})`;
}

/** A status as an SQL literal: only plain names, so inlining it is safe. */
function quoted(status: string): string {
  if (!/^[A-Z_]+$/.test(status)) throw new Error(`bad status ${status}`);
  return `'${status}'`;
}
