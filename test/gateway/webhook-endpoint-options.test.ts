import { expect } from "chai";
import { useTestSystem } from "../support/system.ts";

describe("webhook endpoint delivery options (ordered, maxInFlight)", () => {
  const sys = useTestSystem({ workerGroups: [] });

  it("defaults to 10 in flight, unordered; echoes ordered and maxInFlight; refuses a bad maxInFlight with 400 naming it", async () => {
    const { api } = await sys.createMerchant("Options");
    const plain = await api.post("/api/v1/webhook-endpoints", { url: "https://receiver.example/a" });
    expect(plain.status).to.equal(201);
    expect(plain.body).to.include({ ordered: false, maxInFlight: 10 });
    const ordered = await api.post("/api/v1/webhook-endpoints", { url: "https://receiver.example/b", ordered: true, maxInFlight: 3 });
    expect(ordered.status).to.equal(201);
    expect(ordered.body).to.include({ ordered: true, maxInFlight: 3 });
    expect((await api.get(`/api/v1/webhook-endpoints/${ordered.body.id}`)).body).to.include({ ordered: true, maxInFlight: 3 });
    for (const maxInFlight of [0, 101, 2.5, "4"]) {
      const bad = await api.post("/api/v1/webhook-endpoints", { url: "https://receiver.example/c", maxInFlight });
      expect(bad.status, String(maxInFlight)).to.equal(400);
      expect(bad.text).to.contain("maxInFlight");
    }
  });
});
