import { Session } from "node:inspector/promises";
import { writeFile } from "node:fs/promises";
import { dropTemplate } from "../support/database.ts";
import { ApiFigures } from "./figures.ts";
const api = new ApiFigures();
await api.start();
try {
  await api.create();
  const s = new Session();
  s.connect();
  await s.post("HeapProfiler.enable");
  await s.post("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  const r = await api.read();
  const { profile } = await s.post("HeapProfiler.stopSampling");
  await writeFile("/tmp/prof/read.heapprofile", JSON.stringify(profile));
  const secs = Number(process.env.BENCH_DURATION ?? 15) + Number(process.env.BENCH_WARMUP ?? 3);
  console.log("read", r.values, "requests ~", Math.round(r.values.req_per_s! * secs));
} finally {
  await api.close();
  await dropTemplate();
}
