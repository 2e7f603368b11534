import type { Logger } from "./logger.ts";

/**
 * Logs a dependency outage twice: once when the first failure is seen, once
 * when the first success follows (with how many failures were absorbed),
 * instead of one line per failed request or job attempt.
 */
export class OutageLog {
  readonly #logger: Logger;
  readonly #dependency: string;
  #since: Date | undefined;
  #failures = 0;

  constructor(logger: Logger, dependency: string) {
    this.#logger = logger;
    this.#dependency = dependency;
  }

  get down(): boolean {
    return this.#since !== undefined;
  }

  failed(err: unknown, context: Record<string, unknown> = {}): void {
    this.#failures += 1;
    if (this.#since) return;
    this.#since = new Date();
    this.#logger.error({ err, dependency: this.#dependency, ...context }, `${this.#dependency} unavailable: outage started`);
  }

  succeeded(): void {
    if (!this.#since) return;
    const seconds = (Date.now() - this.#since.getTime()) / 1000;
    this.#logger.warn({ dependency: this.#dependency, failures: this.#failures, seconds }, `${this.#dependency} available again: outage ended`);
    this.#since = undefined;
    this.#failures = 0;
  }
}
