/**
 * The load generator in its own process (as the baselines run it, so that it
 * does not share the service's event loop): the baselines' own autocannon
 * wrapper (same connections, warm-up and duration), driven by a JSON spec.
 * argv[2]: a JSON file { url, method, apiKey, ids?: string[], body?: object (create) }.
 * Prints one JSON line (the wrapper's figures) on stdout.
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { baselinesDir } from "./baselines.ts";

interface Spec {
  url: string;
  method: "GET" | "POST";
  apiKey: string;
  ids?: string[];
  body?: Record<string, unknown>;
}

const spec = JSON.parse(await readFile(process.argv[2]!, "utf8")) as Spec;
const { load } = (await import(pathToFileURL(path.join(baselinesDir(), "lib/load.mjs")).href)) as {
  load: (url: string, method: string, setup: (req: any) => any) => Promise<Record<string, number>>;
};
const base = new URL(spec.url);
const setup =
  spec.method === "GET"
    ? (req: any) => {
        const id = spec.ids![Math.floor(Math.random() * spec.ids!.length)]!;
        return { ...req, method: "GET", path: `${base.pathname}/${id}`, headers: { "x-api-key": spec.apiKey } };
      }
    : (req: any) => {
        const key = randomUUID();
        return {
          ...req,
          method: "POST",
          path: base.pathname,
          headers: { "x-api-key": spec.apiKey, "content-type": "application/json", "idempotency-key": key },
          body: JSON.stringify({ ...spec.body, externalReference: `bench-${key}` }),
        };
      };
const result = await load(base.origin, spec.method, setup);
process.stdout.write(`${JSON.stringify(result)}\n`);
