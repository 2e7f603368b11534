/**
 * All business time comes from a Clock. Outside sandbox mode it is the wall
 * clock. In sandbox mode the offset lives in Postgres (sandbox_clock) so that
 * every process sees the same time; each process refreshes it periodically and
 * sweeps call sync() first so they never act on a stale offset.
 */
export interface Clock {
  now(): Date;
  /** Refreshes shared state (the sandbox offset); a no-op for the wall clock. */
  sync(): Promise<void>;
}

export const systemClock: Clock = {
  now: () => new Date(),
  sync: async () => {},
};

interface OffsetSource {
  readOffsetMs(): Promise<number>;
}

export class SandboxClock implements Clock {
  #offsetMs = 0;
  readonly #source: OffsetSource;

  constructor(source: OffsetSource) {
    this.#source = source;
  }

  now(): Date {
    return new Date(Date.now() + this.#offsetMs);
  }

  async sync(): Promise<void> {
    this.#offsetMs = await this.#source.readOffsetMs();
  }

  /** For the process that just advanced the clock: take the new offset at once. */
  setOffset(offsetMs: number): void {
    this.#offsetMs = offsetMs;
  }
}
