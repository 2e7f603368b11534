import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { performance } from "node:perf_hooks";
import { DestinationRefused, resolveAllowedAddresses, type ResolvedAddress } from "./destination-guard.ts";

interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Check the destination against the SSRF rule (production mode). */
  guardDestination: boolean;
  /** Keep-alive agents for consecutive sends to one endpoint (see createSenderAgents); none: a fresh connection. */
  agents?: SenderAgents | undefined;
}

export interface SenderAgents {
  http: http.Agent;
  https: https.Agent;
  destroy(): void;
}

/**
 * One worker's turn on one endpoint reuses its connections (one per request
 * in flight). A reused socket is still connected to an address the guard
 * approved when it was opened.
 */
export function createSenderAgents(maxSockets = 1): SenderAgents {
  const options = { keepAlive: true, maxSockets, keepAliveMsecs: 1000 };
  const agents = { http: new http.Agent(options), https: new https.Agent(options) };
  return { ...agents, destroy: () => (agents.http.destroy(), agents.https.destroy()) };
}

export interface WebhookResponse {
  /** The HTTP status, when the receiver answered within the timeout. */
  statusCode?: number;
  /** Why there is no usable answer (timeout, connection error, refused destination). */
  error?: string;
  /** Why there is no HTTP answer, as a bounded kind (for metrics): the timeout ran out, or no receiver was reached. */
  failure?: "timeout" | "refused" | "network";
  durationMs: number;
  responseExcerpt?: string;
}

const EXCERPT_BYTES = 1000;

/**
 * POSTs one webhook. Uses node:http rather than fetch because only it lets
 * us connect to the very addresses the SSRF guard approved (a `lookup` hook).
 * Redirects are not followed (a 3xx is a failed attempt), and the timeout
 * covers the whole exchange, DNS to the last byte read. Every network
 * outcome is an answer, never an exception.
 */
export async function sendWebhook(request: WebhookRequest): Promise<WebhookResponse> {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return { error: "invalid URL", durationMs: 0 };
  }
  // Not AbortSignal.timeout: its timer cannot be cleared, so every request, answered in a millisecond, still
  // fired it webhookTimeoutMs later and built a DOMException with its stack (a tenth of a delivery's CPU in B7).
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), request.timeoutMs);
  try {
    return await exchange(request, url, timeout.signal);
  } finally {
    clearTimeout(timer);
  }
}

async function exchange(request: WebhookRequest, url: URL, signal: AbortSignal): Promise<WebhookResponse> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let lookupHook: LookupFunction | undefined;
  if (request.guardDestination) {
    try {
      // The DNS answer counts against the same timeout as the request.
      const timedOut = new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(new DestinationRefused("")), { once: true }));
      lookupHook = pinnedLookup(await Promise.race([resolveAllowedAddresses(url.hostname), timedOut]));
    } catch (err) {
      if (signal.aborted) return { error: `timed out after ${request.timeoutMs} ms`, failure: "timeout", durationMs: elapsed() };
      if (err instanceof DestinationRefused) return { error: err.message, failure: "refused", durationMs: elapsed() };
      throw err;
    }
  }
  const body = Buffer.from(request.body, "utf8");
  const secure = url.protocol === "https:";
  const client = secure ? https : http;
  const agent = request.agents ? (secure ? request.agents.https : request.agents.http) : false;
  return new Promise<WebhookResponse>((resolve) => {
    const req = client.request(
      url,
      {
        method: "POST",
        headers: { ...request.headers, "content-type": "application/json", "content-length": String(body.length) },
        signal,
        agent,
        ...(lookupHook && { lookup: lookupHook }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          if (size < EXCERPT_BYTES) chunks.push(chunk);
          size += chunk.length;
          // Enough to show the merchant; no need to read a huge answer.
          if (size >= EXCERPT_BYTES) res.destroy();
        });
        const finish = () =>
          resolve({
            statusCode: res.statusCode ?? 0,
            durationMs: elapsed(),
            responseExcerpt: Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString("utf8") || undefined,
          });
        res.on("end", finish);
        res.on("close", finish);
        res.on("error", () => {
          if (signal.aborted) resolve({ error: `timed out after ${request.timeoutMs} ms`, failure: "timeout", durationMs: elapsed() });
          else finish();
        });
      },
    );
    req.on("error", (err: NodeJS.ErrnoException) => {
      if (signal.aborted) resolve({ error: `timed out after ${request.timeoutMs} ms`, failure: "timeout", durationMs: elapsed() });
      else resolve({ error: describeNetworkError(err), failure: err.code === "ECONNREFUSED" ? "refused" : "network", durationMs: elapsed() });
    });
    req.end(body);
  });
}

function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (err: null, addresses: ResolvedAddress[]) => void)(null, addresses);
    } else {
      callback(null, addresses[0]!.address, addresses[0]!.family);
    }
  };
}

function describeNetworkError(err: NodeJS.ErrnoException): string {
  const known: Record<string, string> = {
    ECONNREFUSED: "connection refused",
    ECONNRESET: "connection reset by the receiver",
    ENOTFOUND: "could not resolve the host",
    EAI_AGAIN: "could not resolve the host (temporary DNS failure)",
    EHOSTUNREACH: "host unreachable",
    ENETUNREACH: "network unreachable",
    CERT_HAS_EXPIRED: "TLS certificate has expired",
    DEPTH_ZERO_SELF_SIGNED_CERT: "TLS certificate is self-signed",
    ERR_TLS_CERT_ALTNAME_INVALID: "TLS certificate does not match the host",
  };
  return (err.code && known[err.code]) ?? `request failed: ${(err.code ?? err.message).slice(0, 200)}`;
}
