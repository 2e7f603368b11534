import { Code, ConnectError } from "@connectrpc/connect";

/** The Connect protocol's deadline header: the caller's remaining milliseconds. */
export const TIMEOUT_HEADER = "connect-timeout-ms";

/** A call's deadline as connect-node resolves it: none given takes the default; zero or less means none. */
export function callDeadline(timeoutMs: number | undefined, defaultTimeoutMs: number | undefined): number | undefined {
  if (timeoutMs === undefined) return defaultTimeoutMs || undefined;
  return timeoutMs <= 0 ? undefined : timeoutMs;
}

/** What a caller whose deadline passed receives, and the handler's signal is aborted with. */
export const deadlineExceeded = () => new ConnectError("the operation timed out", Code.DeadlineExceeded);

/** The caller's deadline and abort signal, as a network client enforces them; the handler's signal is aborted with them. */
export function raceDeadline<T>(call: Promise<T>, controller: AbortController, deadlineMs: number | undefined, signal: AbortSignal | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const stop = (err: ConnectError) => {
      cleanup();
      controller.abort(err);
      reject(err);
    };
    const onAbort = () => stop(new ConnectError("operation was aborted", Code.Canceled));
    const cleanup = () => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    // Handled first: a call the caller already gave up on still settles, and its rejection must not go unhandled.
    call.then(
      (v) => {
        cleanup();
        resolve(v);
      },
      (err) => {
        cleanup();
        reject(err);
      },
    );
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    if (deadlineMs) timer = setTimeout(() => stop(deadlineExceeded()), deadlineMs);
  });
}
