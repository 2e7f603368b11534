import { HttpError } from "../http-errors.ts";
import { findKeyProblem } from "../../services/platform/json-keys.ts";

/**
 * For the body parser's onError: a body it refused although the text is valid
 * JSON (its prototype-poisoning check refuses `__proto__`) becomes a 400
 * naming the key; any other parse failure goes on as it was (MALFORMED_JSON,
 * 413, 415 in the error handler).
 */
export function bodyParseError(err: unknown): unknown {
  const raw = (err as { body?: unknown } | null)?.body;
  if (typeof raw !== "string") return err;
  try {
    JSON.parse(raw);
  } catch {
    return err;
  }
  const problem = findKeyProblem(raw);
  return problem ? new HttpError(400, "INVALID_REQUEST", problem.message, [problem]) : err;
}
