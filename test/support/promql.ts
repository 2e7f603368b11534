/**
 * Just enough of PromQL to ask a real Prometheus whether a query's parts
 * exist: the vector selectors (metric name and the label names they match on)
 * and the `by (...)` groupings with the metrics they aggregate. Not a full
 * parser: the alert and dashboard expressions of deploy/ are its input.
 */
export interface Selector {
  metric: string;
  /** Label names of its matchers ({outcome="failed"} -> outcome). */
  labels: string[];
}

export interface Grouping {
  /** The labels of `by (...)`. */
  labels: string[];
  /** The metrics of the aggregated expression. */
  metrics: string[];
  /** The aggregation's source text (for messages). */
  text: string;
}

const AGGREGATIONS = new Set(["sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile"]);
const KEYWORDS = new Set([
  ...AGGREGATIONS,
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "and",
  "or",
  "unless",
  "offset",
  "inf",
  "nan",
]);

interface Token {
  kind: "ident" | "open" | "close" | "braces" | "other";
  text: string;
  start: number;
  end: number;
}

function tokenize(expr: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < expr.length) {
    const c = expr[i]!;
    if (/\s/.test(c)) i++;
    else if (c === "[")
      i = expr.indexOf("]", i) + 1; // a range or subquery: durations and Grafana's $__rate_interval
    else if (c === "{") {
      // Matchers: quoted values may hold anything, braces included.
      let j = i + 1;
      while (j < expr.length && expr[j] !== "}") j = expr[j] === '"' ? afterString(expr, j) : j + 1;
      tokens.push({ kind: "braces", text: expr.slice(i, j + 1), start: i, end: j + 1 });
      i = j + 1;
    } else if (c === '"' || c === "'") {
      const j = afterString(expr, i);
      tokens.push({ kind: "other", text: expr.slice(i, j), start: i, end: j });
      i = j;
    } else if (/[a-zA-Z_:]/.test(c)) {
      const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(expr.slice(i))![0];
      tokens.push({ kind: "ident", text: m, start: i, end: i + m.length });
      i += m.length;
    } else if (/[0-9.]/.test(c)) {
      i += /^[0-9.]+(e[+-]?[0-9]+)?[a-z]*/i.exec(expr.slice(i))![0].length;
    } else {
      tokens.push({ kind: c === "(" ? "open" : c === ")" ? "close" : "other", text: c, start: i, end: i + 1 });
      i++;
    }
  }
  return tokens;
}

/** The index after the string literal that opens at `quote` (backslash escapes skipped). */
function afterString(expr: string, quote: number): number {
  let j = quote + 1;
  while (j < expr.length && expr[j] !== expr[quote]) j += expr[j] === "\\" ? 2 : 1;
  return j + 1;
}

/** Index of the token that closes the paren opened at `open`. */
function closing(tokens: Token[], open: number): number {
  let depth = 0;
  for (let k = open; k < tokens.length; k++) {
    if (tokens[k]!.kind === "open") depth++;
    if (tokens[k]!.kind === "close" && --depth === 0) return k;
  }
  throw new Error("unbalanced parentheses");
}

/** Label names of a matcher block: {a="x", b=~"y"} -> [a, b]. */
function matcherLabels(braces: string): string[] {
  return [...braces.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*"/g)].map((m) => m[1]!);
}

export function analyse(expr: string): { selectors: Selector[]; groupings: Grouping[] } {
  const tokens = tokenize(expr);
  const selectorAt = new Map<number, Selector>();
  const labelLists = new Set<number>(); // tokens inside by/without/on/ignoring lists
  const byLists: { labels: string[]; keyword: number; open: number; close: number }[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (t.kind === "ident" && ["by", "without", "on", "ignoring", "group_left", "group_right"].includes(t.text) && tokens[k + 1]?.kind === "open") {
      const close = closing(tokens, k + 1);
      const labels: string[] = [];
      for (let m = k + 2; m < close; m++) {
        labelLists.add(m);
        if (tokens[m]!.kind === "ident") labels.push(tokens[m]!.text);
      }
      if (t.text === "by") byLists.push({ labels, keyword: k, open: k + 1, close });
    }
  }
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (labelLists.has(k) || KEYWORDS.has(t.text.toLowerCase())) continue;
    if (t.kind === "ident" && tokens[k + 1]?.kind !== "open") {
      const braces = tokens[k + 1]?.kind === "braces" ? tokens[k + 1]!.text : "";
      selectorAt.set(k, { metric: t.text, labels: matcherLabels(braces) });
    } else if (t.kind === "braces" && tokens[k - 1]?.kind !== "ident") {
      // {__name__="x"} style: named by its matcher.
      const name = /__name__\s*=\s*"([^"]+)"/.exec(t.text)?.[1];
      if (name) selectorAt.set(k, { metric: name, labels: matcherLabels(t.text).filter((l) => l !== "__name__") });
    }
  }
  const metricsBetween = (from: number, to: number) => [...new Set([...selectorAt].filter(([k]) => k > from && k < to).map(([, s]) => s.metric))];
  const groupings = byLists.map(({ labels, keyword, close }) => {
    // `sum by (x) (arg)`: the group after the list; `sum (arg) by (x)`: the group before the keyword.
    let from: number;
    let to: number;
    if (tokens[close + 1]?.kind === "open") {
      from = close + 1;
      to = closing(tokens, from);
    } else {
      to = keyword - 1;
      let depth = 0;
      from = to;
      for (; from >= 0; from--) {
        if (tokens[from]!.kind === "close") depth++;
        if (tokens[from]!.kind === "open" && --depth === 0) break;
      }
    }
    const first = Math.min(keyword - 1, from - 1);
    return { labels, metrics: metricsBetween(from, to), text: expr.slice(tokens[Math.max(first, 0)]!.start, tokens[Math.max(to, close)]!.end) };
  });
  return { selectors: [...selectorAt.values()], groupings };
}
