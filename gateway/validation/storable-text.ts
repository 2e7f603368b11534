/**
 * Input that passes the JSON schemas can still be unstorable: Postgres refuses
 * U+0000 in text and jsonb and an unpaired UTF-16 surrogate in jsonb (protobuf
 * would silently turn one in a plain string into U+FFFD), and free-form
 * metadata nested thousands deep overflows the stack when re-serialized.
 * Checked at the edge, for every body, query and path value, so such input is
 * a 400 naming the field instead of a 500 from the database.
 */
const MAX_NESTING = 32;

interface TextProblem {
  field: string;
  rule: string;
  message: string;
}

export function findUnstorable(value: unknown, field: string, depth = 0): TextProblem | undefined {
  if (typeof value === "string") return badText(value, field);
  if (value === null || typeof value !== "object") return undefined;
  if (depth >= MAX_NESTING) {
    return { field, rule: "maxDepth", message: `${field}: must not nest objects or arrays more than ${MAX_NESTING} levels deep` };
  }
  for (const [key, item] of Object.entries(value)) {
    const path = field ? `${field}.${key}` : key;
    // A bad key is named by its parent: the key itself may not be printable.
    const keyProblem = Array.isArray(value) ? undefined : badText(key, field || "body");
    if (keyProblem) return { ...keyProblem, message: keyProblem.message.replace(": must", ": keys must") };
    const problem = findUnstorable(item, path, depth + 1);
    if (problem) return problem;
  }
  return undefined;
}

function badText(text: string, field: string): TextProblem | undefined {
  if (text.includes("\u0000")) return { field, rule: "text", message: `${field}: must not contain the NUL character (U+0000)` };
  if (!text.isWellFormed()) return { field, rule: "text", message: `${field}: must be well-formed Unicode (no unpaired surrogates)` };
  return undefined;
}
