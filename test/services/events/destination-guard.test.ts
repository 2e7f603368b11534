import { expect } from "chai";
import { forbiddenRange, resolveAllowedAddresses, DestinationRefused } from "../../../services/events/destination-guard.ts";

describe("webhook destination guard (SSRF)", () => {
  it("refuses loopback, private, link-local (metadata), CGNAT, unique-local and other special addresses", () => {
    const refused: [string, string][] = [
      ["127.0.0.1", "loopback"],
      ["127.8.9.10", "loopback"],
      ["::1", "loopback"],
      ["10.1.2.3", "private"],
      ["172.16.0.1", "private"],
      ["192.168.1.1", "private"],
      ["169.254.169.254", "linkLocal"],
      ["fe80::1", "linkLocal"],
      ["100.64.0.1", "carrierGradeNat"],
      ["fd00:ec2::254", "uniqueLocal"],
      ["0.0.0.0", "unspecified"],
      ["::", "unspecified"],
      ["224.0.0.1", "multicast"],
      ["255.255.255.255", "broadcast"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:169.254.169.254", "linkLocal"],
      ["64:ff9b::a9fe:a9fe", "rfc6052"],
    ];
    for (const [address, range] of refused) expect(forbiddenRange(address), address).to.equal(range);
  });

  it("allows public unicast addresses", () => {
    for (const address of ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) {
      expect(forbiddenRange(address), address).to.equal(undefined);
    }
  });

  it("resolves host names at send time and refuses one that points inside", async () => {
    const err = await resolveAllowedAddresses("localhost").catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DestinationRefused);
    expect((err as Error).message).to.match(/^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    const literal = await resolveAllowedAddresses("[::1]").catch((e: unknown) => e);
    expect((literal as Error).message).to.include("::1, a loopback address");
    expect(await resolveAllowedAddresses("8.8.8.8")).to.deep.equal([{ address: "8.8.8.8", family: 4 }]);
  });
});
