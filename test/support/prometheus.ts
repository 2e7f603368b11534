import parsePrometheusTextFormat, { type MetricFamily } from "parse-prometheus-text-format";

/** One scrape of a /metrics endpoint, parsed by a Prometheus text-format parser. */
export interface Scrape {
  text: string;
  /** Families with their declared TYPE. */
  families: Map<string, MetricFamily>;
  /** Sum of the samples whose labels include `labels` (a histogram: its _count); 0 when none. */
  value(name: string, labels?: Record<string, string>): number;
  /** Every label set of a family (a histogram: of its _count series). */
  labelSets(name: string): Record<string, string>[];
}

export async function scrape(metricsPort: number): Promise<Scrape> {
  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  if (!res.headers.get("content-type")?.startsWith("text/plain")) throw new Error(`/metrics content-type ${res.headers.get("content-type")}`);
  return parseScrape(await res.text());
}

export function parseScrape(text: string): Scrape {
  const families = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
  // The parser folds a labelled histogram into one unlabelled sample; read its series as untyped ones instead.
  // Untyped, each label set's _bucket/_sum/_count lines start new families of the same name: merge them.
  const series = new Map<string, MetricFamily>();
  for (const f of parsePrometheusTextFormat(text.replace(/^# TYPE (\S+) histogram$/gm, "# TYPE $1 untyped"))) {
    const seen = series.get(f.name);
    if (seen) seen.metrics.push(...f.metrics);
    else series.set(f.name, f);
  }
  const seriesOf = (name: string) => (families.get(name)?.type === "HISTOGRAM" ? series.get(`${name}_count`) : series.get(name))?.metrics ?? [];
  const matches = (name: string, labels: Record<string, string>) => seriesOf(name).filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return {
    text,
    families,
    value: (name, labels = {}) => matches(name, labels).reduce((sum, m) => sum + Number(m.value ?? 0), 0),
    labelSets: (name) => seriesOf(name).map((m) => m.labels ?? {}),
  };
}
