import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { apiClient } from "../support/http.ts";
import { patientClient } from "./patient-client.ts";

describe("the soak's patient client (test/soak/patient-client.ts)", () => {
  let server: http.Server;
  let base: string;
  const seen: { method: string; key: string | undefined }[] = [];
  let answers: number[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      seen.push({ method: req.method!, key: req.headers["idempotency-key"] as string | undefined });
      req.resume();
      res.writeHead(answers.shift() ?? 200, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((r) => server.close(r)));
  beforeEach(() => {
    seen.length = 0;
  });

  it("retries 503 and 504 with the same Idempotency-Key on every attempt of a POST", async () => {
    answers = [503, 504, 201];
    const retries = { count: 0 };
    const res = await patientClient(apiClient(base), retries).post("/x", { a: 1 });
    expect(res.status).to.equal(201);
    expect(retries.count).to.equal(2);
    expect(seen).to.have.length(3);
    expect(new Set(seen.map((s) => s.key)).size).to.equal(1);
    expect(seen[0]!.key).to.be.a("string");
  });

  it("returns other answers at once, and gives up after its attempts", async () => {
    answers = [409];
    expect((await patientClient(apiClient(base), { count: 0 }).post("/x", {})).status).to.equal(409);
    answers = [503, 503, 503];
    const res = await patientClient(apiClient(base), { count: 0 }, 2).get("/x");
    expect(res.status).to.equal(503);
    expect(seen.filter((s) => s.method === "GET")).to.have.length(2);
    expect(seen.find((s) => s.method === "GET")!.key).to.equal(undefined);
  });
});
