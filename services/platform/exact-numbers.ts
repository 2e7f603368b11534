interface NumberProblem {
  field: string;
  rule: string;
  message: string;
}

/**
 * Merchant data is stored exactly as sent or refused. A JSON number becomes an
 * IEEE double when parsed, so `12345678901234567890123`, `0.1000000000000000055511151231257827`
 * or `1e400` would come back changed (1.2345678901234568e+22, 0.1, null). Such a
 * number is refused with a 400 naming its key path; the merchant can send it as a
 * string. A number that only changes spelling (`2.50` → 2.5, `1e2` → 100) has the
 * same value and is accepted. Uses JSON.parse's source text access (Node ≥ 21).
 * The gateway applies it to every JSON body; the services to metadata that
 * internal callers send as JSON text.
 */
export function findInexactNumber(rawJson: string, root = ""): NumberProblem | undefined {
  if (!/[0-9]/.test(rawJson)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawJson, (_key, value, context?: { source?: string }) =>
      typeof value === "number" && context?.source !== undefined && !sameDecimal(context.source, String(value)) ? new Inexact(context.source, value) : value,
    );
  } catch {
    return undefined; // the body parser already answered malformed JSON
  }
  return locate(parsed, root);
}

class Inexact {
  readonly source: string;
  readonly value: number;
  constructor(source: string, value: number) {
    this.source = source;
    this.value = value;
  }
}

function locate(value: unknown, field: string): NumberProblem | undefined {
  if (value instanceof Inexact) {
    const name = field || "body";
    const becomes = Number.isFinite(value.value) ? String(value.value) : "null";
    return {
      field: name,
      rule: "exactNumber",
      message: `${name}: the number ${value.source} cannot be stored exactly (it would come back as ${becomes}); send it as a string`,
    };
  }
  if (value === null || typeof value !== "object") return undefined;
  for (const [key, item] of Object.entries(value)) {
    const problem = locate(item, field ? `${field}.${key}` : key);
    if (problem) return problem;
  }
  return undefined;
}

const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** Whether two JSON number spellings denote the same decimal value. */
export function sameDecimal(a: string, b: string): boolean {
  const x = canonical(a);
  const y = canonical(b);
  return x !== undefined && x === y;
}

function canonical(text: string): string | undefined {
  const m = NUMBER.exec(text);
  if (!m) return undefined; // Infinity, NaN
  const [, sign, int, frac = "", exp = "0"] = m;
  let digits = (int! + frac).replace(/^0+/, "");
  if (digits === "") return "0";
  let exponent = BigInt(exp) - BigInt(frac.length);
  const trailing = digits.length - digits.replace(/0+$/, "").length;
  digits = digits.slice(0, digits.length - trailing);
  exponent += BigInt(trailing);
  return `${sign}${digits}e${exponent}`;
}
