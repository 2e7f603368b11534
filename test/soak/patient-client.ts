import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { ApiClient, ApiResponse } from "../support/http.ts";

/**
 * How a careful merchant calls the API, which the soak is: a 503/504 (the
 * service sheds load fast when the machine is saturated) or a dropped
 * connection is retried with back-off, and every POST carries one
 * Idempotency-Key across its retries so a retry never does the work twice.
 * `retries.count` says how often it had to. 24 attempts, 5 s apart at most: a key
 * stays "in flight" for up to a minute after a 504 (the service may still be
 * doing the work), so a retry may need that long.
 */
export function patientClient(client: ApiClient, retries: { count: number }, attempts = 24): ApiClient {
  const request = async <T>(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; raw?: string } = {},
  ): Promise<ApiResponse<T>> => {
    const headers = method === "POST" ? { "idempotency-key": randomUUID(), ...options.headers } : options.headers;
    for (let attempt = 1; ; attempt++) {
      const res = await client
        .request<T>(method, path, { ...options, headers })
        .catch(() => ({ status: 0, body: undefined as T, headers: new Headers(), text: "connection failed" }));
      const again = res.status === 0 || res.status === 503 || res.status === 504 || (res.status === 409 && res.text.includes("IDEMPOTENCY_KEY_IN_USE"));
      if (!again || attempt >= attempts) return res;
      retries.count += 1;
      await sleep(Math.min(250 * 2 ** attempt, 5_000));
    }
  };
  return {
    request,
    get: (path, headers) => request("GET", path, { headers }),
    post: (path, body, headers) => request("POST", path, { body, headers }),
    delete: (path, headers) => request("DELETE", path, { headers }),
  };
}
