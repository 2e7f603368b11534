import { recordAnswer } from "./answers-seen.ts";

/** A small fetch wrapper for black-box REST tests. */
export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface ApiClient {
  request<T = any>(method: string, path: string, options?: { body?: unknown; headers?: Record<string, string>; raw?: string }): Promise<ApiResponse<T>>;
  get<T = any>(path: string, headers?: Record<string, string>): Promise<ApiResponse<T>>;
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>;
  delete<T = any>(path: string, headers?: Record<string, string>): Promise<ApiResponse<T>>;
}

export function apiClient(baseUrl: string, defaultHeaders: Record<string, string> = {}): ApiClient {
  const request = async <T>(method: string, path: string, options: { body?: unknown; headers?: Record<string, string>; raw?: string } = {}) => {
    const headers: Record<string, string> = { ...defaultHeaders, ...options.headers };
    let body: string | undefined = options.raw;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body, redirect: "manual" });
    recordAnswer(method, `${baseUrl}${path}`, res.status);
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed as T, headers: res.headers, text };
  };
  return {
    request,
    get: (path, headers) => request("GET", path, { headers }),
    post: (path, body, headers) => request("POST", path, { body, headers }),
    delete: (path, headers) => request("DELETE", path, { headers }),
  };
}
