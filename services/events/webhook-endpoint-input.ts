import { invalid } from "../platform/errors.ts";
import { characterCount } from "../platform/text.ts";
import { isEventType } from "./contract.ts";

const MAX_URL_LENGTH = 2048;
const MAX_DESCRIPTION_LENGTH = 500;
const ALL_EVENTS = "*";

/**
 * The gateway checks the same rules with JSON schemas; these run again here
 * because internal callers reach the service over gRPC directly. Whether the
 * host is a private address is decided at send time (DNS can change), not here.
 */
export function checkWebhookUrl(value: string): string {
  if (characterCount(value) > MAX_URL_LENGTH) throw invalid("INVALID_REQUEST", `url: must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid("INVALID_REQUEST", "url: must be an absolute http or https URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid("INVALID_REQUEST", "url: must be an absolute http or https URL");
  if (!url.hostname) throw invalid("INVALID_REQUEST", "url: must name a host");
  // Credentials in the URL would be shown in every listing: use a signature check instead.
  if (url.username || url.password) throw invalid("INVALID_REQUEST", "url: must not contain credentials");
  return value;
}

/** Empty means every event; "*" stands alone. */
export function checkEnabledEvents(values: readonly string[]): string[] {
  if (values.length === 0) return [ALL_EVENTS];
  if (values.includes(ALL_EVENTS)) {
    if (values.length > 1) throw invalid("INVALID_REQUEST", 'enabledEvents: "*" cannot be combined with other types');
    return [ALL_EVENTS];
  }
  const unknown = values.filter((v) => !isEventType(v));
  if (unknown.length) throw invalid("INVALID_REQUEST", `enabledEvents: unknown event type ${unknown.join(", ")}`);
  if (new Set(values).size !== values.length) throw invalid("INVALID_REQUEST", "enabledEvents: must not repeat a type");
  return [...values];
}

export function checkDescription(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (characterCount(value) > MAX_DESCRIPTION_LENGTH) throw invalid("INVALID_REQUEST", `description: must be at most ${MAX_DESCRIPTION_LENGTH} characters`);
  return value;
}

export const subscribesTo = (enabledEvents: readonly string[], type: string): boolean => enabledEvents.includes(ALL_EVENTS) || enabledEvents.includes(type);
