import { pino, type Logger } from "pino";
import { trace } from "@opentelemetry/api";

export type { Logger };

/**
 * Structured JSON logs. Secrets never reach a log line: the redact list covers
 * every place one could appear (headers, request bodies, config).
 */
export function createLogger(level: string, name = "billing"): Logger {
  return pino({
    name,
    level,
    mixin: traceFields,
    redact: {
      paths: [
        'req.headers["x-api-key"]',
        'req.headers["x-admin-key"]',
        "req.headers.authorization",
        "req.headers.cookie",
        "*.password",
        "*.pin",
        "*.apiKey",
        "*.secret",
        "*.internalApiToken",
        "*.adminApiKey",
        "*.secretsKey",
      ],
      censor: "[redacted]",
    },
  });
}

/**
 * A line written inside a span carries its trace_id and span_id, so logs and
 * traces join. Without the tracing SDK there is never an active span.
 */
function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
