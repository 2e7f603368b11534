/**
 * Keys a JSON text may not carry (a REST body, metadata sent over RPC as
 * JSON), found in the text because the parsed object no longer shows them:
 * - a key twice in one object (`{"amount":"1","amount":"2"}`): JSON.parse
 *   keeps the last, so the merchant's data would be silently changed;
 * - `__proto__`: JavaScript's name for an object's prototype; the gateway's
 *   body parser refused it as "not valid JSON" although the body is valid.
 * No maintained npm package does just this (json-dup-key-validator is a
 * hand-written parser of its own; jsonc-parser, momoa and @prantlf/jsonlint
 * are whole parsers), and the text has already passed JSON.parse, so this
 * small scanner only follows strings, nesting and commas: one pass, with
 * `indexOf` over string contents (about as fast as JSON.parse of the same text).
 */
interface KeyProblem {
  field: string;
  rule: "duplicateKey" | "forbiddenKey";
  message: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

interface Container {
  /** Keys seen so far (objects); undefined for arrays. */
  keys: Set<string> | undefined;
  path: string;
  /** The latest key (objects) or element index (arrays): names a nested container's path. */
  at: string;
  index: number;
}

/** The first problem key in `json`, which must be valid JSON text, with its path under `root` (`metadata.a`, `items.0.b`). */
export function findKeyProblem(json: string, root = ""): KeyProblem | undefined {
  const stack: Container[] = [];
  let expectKey = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(json, i);
      const top = stack[stack.length - 1];
      if (expectKey && top?.keys) {
        const raw = json.slice(i + 1, end);
        // Escapes (`"\u0061"` is the key "a") are decoded the way JSON.parse decodes them.
        const key = raw.includes("\\") ? (JSON.parse(json.slice(i, end + 1)) as string) : raw;
        const field = join(top.path, key);
        if (key === "__proto__")
          return { field, rule: "forbiddenKey", message: `${field}: this key is not allowed (__proto__ names an object's prototype in JavaScript)` };
        if (top.keys.has(key)) return { field, rule: "duplicateKey", message: `${field}: this key appears more than once in its object; send it once` };
        top.keys.add(key);
        top.at = key;
        expectKey = false;
      }
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const parent = stack[stack.length - 1];
      const path = parent ? join(parent.path, parent.keys ? parent.at : String(parent.index)) : root;
      stack.push({ keys: c === OPEN_OBJECT ? new Set() : undefined, path, at: "", index: 0 });
      expectKey = c === OPEN_OBJECT;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      stack.pop();
      expectKey = false;
    } else if (c === COMMA) {
      const top = stack[stack.length - 1];
      if (top?.keys) expectKey = true;
      else if (top) top.index += 1;
    }
  }
  return undefined;
}

/** The index of the quote that closes the string opening at `start` (one not escaped by an odd run of backslashes). */
function stringEnd(json: string, start: number): number {
  let end = json.indexOf('"', start + 1);
  for (;;) {
    if (end === -1) return json.length; // not JSON after all: stop scanning rather than loop
    let backslashes = 0;
    while (json.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return end;
    end = json.indexOf('"', end + 1);
  }
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
