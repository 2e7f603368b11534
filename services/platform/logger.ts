import { pino, type Logger } from "pino";

export type { Logger };

/**
 * Structured JSON logs. Secrets never reach a log line: the redact list covers
 * every place one could appear (headers, request bodies, config).
 */
export function createLogger(level: string, name = "billing"): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: [
        "req.headers[\"x-api-key\"]",
        "req.headers[\"x-admin-key\"]",
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
