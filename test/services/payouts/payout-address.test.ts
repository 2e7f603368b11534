import { expect } from "chai";
import { canonicalPayoutAddress } from "../../../services/payouts/addresses/payout-address.ts";
import { DomainError } from "../../../services/platform/errors.ts";

/** Published vectors per network: each valid one passes, and one character off fails naming `address`. */
describe("payout address validation (published vectors)", () => {
  const refusal = (network: string, address: string, chain: "mainnet" | "testnet" = "mainnet") => {
    try {
      canonicalPayoutAddress(network, address, chain);
    } catch (err) {
      expect(err).to.be.instanceOf(DomainError);
      expect((err as DomainError).code).to.equal("INVALID_REQUEST");
      expect((err as DomainError).message).to.match(/^address: /);
      return (err as DomainError).message;
    }
    throw new Error(`${network} ${address} was accepted`);
  };

  /** Changes one character to another of the same alphabet (so only the checksum can catch it). */
  const oneOff = (address: string, index: number, alphabet: string) => {
    const c = address[index]!;
    const lower = c.toLowerCase();
    const next = alphabet[(alphabet.indexOf(lower) + 1) % alphabet.length]!;
    return address.slice(0, index) + (c === lower ? next : next.toUpperCase()) + address.slice(index + 1);
  };
  const BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
  const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

  describe("BITCOIN", () => {
    const valid = [
      // BIP-173 / BIP-350 valid segwit addresses (mainnet): P2WPKH, P2WSH, taproot
      ["BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"],
      ["bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3", "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3"],
      ["bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0"],
      // base58check: the genesis-era P2PKH and the BIP-16 P2SH example
      ["1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"],
      ["3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"],
    ] as const;
    for (const [address, canonical] of valid) {
      it(`accepts ${address} (canonical ${canonical})`, () => expect(canonicalPayoutAddress("BITCOIN", address, "mainnet")).to.equal(canonical));
    }
    it("refuses each valid address with one character changed (checksum)", () => {
      for (const [address] of valid) {
        const bech = /^bc1/i.test(address);
        const changed = bech ? oneOff(address.toLowerCase(), address.length - 5, BECH32) : oneOff(address, address.length - 5, BASE58);
        expect(refusal("BITCOIN", changed), changed).to.match(/checksum/);
      }
    });
    it("refuses the BIP-173/BIP-350 invalid vectors, naming the rule", () => {
      // v0 with a bech32m checksum, v1 with a bech32 checksum, mixed case, a bad program length, an unknown prefix
      expect(refusal("BITCOIN", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh")).to.match(/bech32 checksum \(BIP-173\)/);
      expect(refusal("BITCOIN", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd")).to.match(/bech32m checksum \(BIP-350\)/);
      expect(refusal("BITCOIN", "bc1qW508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4")).to.match(/mix upper and lower case/);
      expect(refusal("BITCOIN", "BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P")).to.match(/20 or 32 bytes/);
      expect(refusal("BITCOIN", "bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4")).to.match(/bad characters or checksum/);
      // BIP-350 valid witness versions 2 and 16: refused on purpose (not spendable safely yet)
      expect(refusal("BITCOIN", "bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs")).to.match(/taproot/);
      expect(refusal("BITCOIN", "BC1SW50QGDZ25J")).to.match(/taproot/);
    });
    it("follows the deployment's chain: a testnet address on mainnet and a mainnet one on testnet are refused", () => {
      const testnet = "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7";
      expect(refusal("BITCOIN", testnet, "mainnet")).to.match(/mainnet address/);
      expect(canonicalPayoutAddress("BITCOIN", testnet, "testnet")).to.equal(testnet);
      expect(refusal("BITCOIN", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "testnet")).to.match(/testnet address/);
      expect(refusal("BITCOIN", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "testnet")).to.match(/testnet P2PKH or P2SH/);
      // the testnet P2PKH of the well-known mainnet hash (version 0x6f)
      expect(canonicalPayoutAddress("BITCOIN", "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn", "testnet")).to.equal("mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn");
    });
    it("refuses a TRON or Ethereum address on BITCOIN", () => {
      refusal("BITCOIN", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t");
      refusal("BITCOIN", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed");
    });
  });

  describe("ETHEREUM", () => {
    // The EIP-55 specification's examples.
    const eip55 = [
      "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
      "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
      "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
      "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
    ];
    for (const address of eip55) {
      it(`accepts ${address}, and its all-lower and all-upper forms (no checksum), stored EIP-55`, () => {
        expect(canonicalPayoutAddress("ETHEREUM", address, "mainnet")).to.equal(address);
        expect(canonicalPayoutAddress("ETHEREUM", address.toLowerCase(), "mainnet")).to.equal(address);
        expect(canonicalPayoutAddress("ETHEREUM", `0x${address.slice(2).toUpperCase()}`, "mainnet")).to.equal(address);
      });
    }
    it("refuses each with one letter's case flipped (EIP-55 checksum)", () => {
      for (const address of eip55) {
        const i = [...address].findIndex((c, k) => k > 1 && /[a-f]/i.test(c));
        const c = address[i]!;
        const flipped = address.slice(0, i) + (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) + address.slice(i + 1);
        expect(refusal("ETHEREUM", flipped)).to.match(/EIP-55/);
      }
    });
    it("refuses a wrong length or a missing 0x", () => {
      expect(refusal("ETHEREUM", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe")).to.match(/40 hexadecimal/);
      expect(refusal("ETHEREUM", "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed")).to.match(/40 hexadecimal/);
    });
  });

  describe("TRON", () => {
    // Tether's TRC-20 contract, and TRON's documented example address.
    const valid = ["TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL"];
    for (const address of valid) it(`accepts ${address}`, () => expect(canonicalPayoutAddress("TRON", address, "mainnet")).to.equal(address));
    it("refuses each with one character changed (checksum)", () => {
      for (const address of valid) expect(refusal("TRON", oneOff(address, 10, BASE58))).to.match(/checksum/);
    });
    it("refuses a valid base58check payload without the 0x41 prefix (a Bitcoin address)", () => {
      expect(refusal("TRON", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2")).to.match(/0x41 prefix/);
    });
  });
});
