declare module "parse-prometheus-text-format" {
  /** prom2json's shape: one family per metric name. */
  export interface MetricFamily {
    name: string;
    help: string;
    type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
    metrics: { value?: string; count?: string; sum?: string; buckets?: Record<string, string>; labels?: Record<string, string> }[];
  }
  export default function parsePrometheusTextFormat(text: string): MetricFamily[];
}
