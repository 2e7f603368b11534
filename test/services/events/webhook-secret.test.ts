import { expect } from "chai";
import { randomBytes, randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { openSecret as decryptSecret, sealSecret as encryptSecret } from "../../../services/platform/sealed-secret.ts";
import { generateSecret, signatureHeader } from "../../../services/events/webhook-secret.ts";

describe("webhook secrets", () => {
  const key = randomBytes(32);

  it("generates whsec_ secrets of 32 random bytes", () => {
    const a = generateSecret();
    expect(a).to.match(/^whsec_/);
    expect(Buffer.from(a.slice(6), "base64")).to.have.length(32);
    expect(generateSecret()).to.not.equal(a);
  });

  it("encrypts at rest (AES-256-GCM) and decrypts only with the same key and endpoint", () => {
    const secret = generateSecret();
    const endpointId = randomUUID();
    const stored = encryptSecret(key, endpointId, secret);
    expect(stored).to.not.include(secret.slice(6));
    expect(encryptSecret(key, endpointId, secret)).to.not.equal(stored); // fresh IV each time
    expect(decryptSecret(key, endpointId, stored)).to.equal(secret);
    expect(() => decryptSecret(randomBytes(32), endpointId, stored)).to.throw();
    expect(() => decryptSecret(key, randomUUID(), stored)).to.throw(); // bound to its row
  });

  it("signs so that the standardwebhooks library verifies, one v1 signature per active secret", () => {
    const current = generateSecret();
    const previous = generateSecret();
    const body = JSON.stringify({ id: "evt", type: "plan.created", data: { ü: "ß" } });
    const ts = Math.floor(Date.now() / 1000);
    const header = signatureHeader([current, previous], "evt_1", ts, body);
    expect(header.split(" ")).to.have.length(2);
    const headers = { "webhook-id": "evt_1", "webhook-timestamp": String(ts), "webhook-signature": header };
    expect(new Webhook(current).verify(body, headers)).to.deep.equal(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).to.deep.equal(JSON.parse(body));
    expect(() => new Webhook(generateSecret()).verify(body, headers)).to.throw();
    // The library's own signature for the same input is the one we send.
    expect(new Webhook(current).sign("evt_1", new Date(ts * 1000), body)).to.equal(header.split(" ")[0]);
  });
});
