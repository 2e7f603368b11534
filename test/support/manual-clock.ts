import type { Clock } from "../../services/platform/clock.ts";

/** A fixed, hand-moved clock for tests that drive a use case's time directly. */
export class ManualClock implements Clock {
  #now: Date;
  constructor(start: Date) {
    this.#now = start;
  }
  now(): Date {
    return new Date(this.#now);
  }
  async sync(): Promise<void> {}
  set(to: Date): void {
    this.#now = to;
  }
}
