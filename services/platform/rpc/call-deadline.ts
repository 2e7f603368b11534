import { Code, ConnectError } from "@connectrpc/connect";

/** The Connect protocol's deadline header: the caller's remaining milliseconds. */
export const TIMEOUT_HEADER = "connect-timeout-ms";

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
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    if (deadlineMs) timer = setTimeout(() => stop(new ConnectError(`the operation timed out`, Code.DeadlineExceeded)), deadlineMs);
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
  });
}
