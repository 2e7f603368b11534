import { expect } from "chai";
import { derivePublicChild, parseExtendedPublicKey, publicKeyOf } from "../../../services/orders/addresses/extended-public-key.ts";
import { p2wpkhAddress } from "../../../services/orders/addresses/bitcoin-address.ts";
import { toChecksumAddress } from "../../../services/orders/addresses/evm-address.ts";
import { tronAddressFromBytes } from "../../../services/orders/addresses/tron-address.ts";
import { createDepositAddresses } from "../../../services/orders/addresses/deposit-addresses.ts";
import { loadConfig, TEST_DEPOSIT_XPUBS } from "../../../services/platform/config.ts";

/** BIP32 test vector 1 (seed 000102…0f): the public keys of its chain. */
const BIP32_V1 = {
  m0H: "xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw",
  m0H_1: "xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ",
  m0H_1_2H: "xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5",
  m0H_1_2H_2: "xpub6FHa3pjLCk84BayeJxFW2SP4XRrFd1JYnxeLeU8EqN3vDfZmbqBqaGJAyiLjTAwm6ZLRQUMv1ZACTj37sR62cfN7fe5JnJ7dh8zL4fiyLHV",
  m0H_1_2H_2_1000000000: "xpub6H1LXWLaKsWFhvm6RVpEL9P4KfRZSW7abD2ttkWP3SSQvnyA8FSVqNTEcYFgJS2UaFcxupHiYkro49S8yGasTvXEYBVPamhGW6cFJodrTHy",
  masterPrivate: "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi",
};

describe("deposit address derivation (published vectors)", () => {
  it("derives BIP32 test vector 1's non-hardened children from public keys alone", () => {
    const child = (xpub: string, path: number[]) => derivePublicChild(parseExtendedPublicKey(xpub).key, path).publicExtendedKey;
    expect(child(BIP32_V1.m0H, [1])).to.equal(BIP32_V1.m0H_1);
    expect(child(BIP32_V1.m0H_1_2H, [2])).to.equal(BIP32_V1.m0H_1_2H_2);
    expect(child(BIP32_V1.m0H_1_2H, [2, 1000000000])).to.equal(BIP32_V1.m0H_1_2H_2_1000000000);
  });

  it("refuses hardened indexes and private extended keys", () => {
    const key = parseExtendedPublicKey(BIP32_V1.m0H).key;
    expect(() => derivePublicChild(key, [0x80000000])).to.throw(/non-hardened/);
    expect(() => parseExtendedPublicKey(BIP32_V1.masterPrivate)).to.throw(/private extended key/);
    expect(() => parseExtendedPublicKey("xpub-not-a-key")).to.throw(/base58check/);
  });

  it("derives the BIP84 test vectors (zpub of the 'abandon … about' mnemonic)", () => {
    const zpub = parseExtendedPublicKey(TEST_DEPOSIT_XPUBS.BITCOIN);
    expect(zpub.prefix).to.equal("zpub");
    const address = (path: number[]) => p2wpkhAddress(publicKeyOf(derivePublicChild(zpub.key, path)), zpub.testnet);
    expect(address([0, 0])).to.equal("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu");
    expect(address([0, 1])).to.equal("bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g");
    expect(address([1, 0])).to.equal("bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el");
    // Testnet keys get the "tb" prefix.
    expect(p2wpkhAddress(publicKeyOf(derivePublicChild(zpub.key, [0, 0])), true)).to.match(/^tb1q/);
  });

  it("applies the EIP-55 checksum exactly as the EIP's examples", () => {
    const examples = [
      "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
      "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
      "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
      "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
      "0x52908400098527886E0F7030069857D2E4169EE7",
      "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
      "0xde709f2102306220921060314715629080e2fb77",
      "0x27b1fdb04752bbc536007a920d24acb045561c26",
    ];
    for (const example of examples) expect(toChecksumAddress(example.toLowerCase())).to.equal(example);
  });

  it("encodes TRON addresses as base58check of 0x41 + 20 bytes (TRON documentation example)", () => {
    const bytes = Buffer.from("4450cf8c8b6a8229b7f628e36b3a658e84441b6f", "hex");
    expect(tronAddressFromBytes(bytes)).to.equal("TGCRkw1Vq759FBCrwxkZGgqZbRX1WkBHSu");
  });

  it("derives the well-known first addresses of the sandbox keys per network", () => {
    const addresses = createDepositAddresses(TEST_DEPOSIT_XPUBS);
    expect(addresses.forNetwork("BITCOIN")!.address(0)).to.equal("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu");
    expect(addresses.forNetwork("ETHEREUM")!.address(0)).to.equal("0x9858EfFD232B4033E47d90003D41EC34EcaEda94");
    expect(addresses.forNetwork("TRON")!.address(0)).to.equal("TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH");
    expect(addresses.forNetwork("TRON")!.address(1)).to.equal("TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK");
    expect(addresses.forNetwork("SOLANA")).to.equal(undefined);
    // Indexes are allocated per key: the key id names the network and the key.
    expect(addresses.forNetwork("ETHEREUM")!.keyId).to.match(/^ETHEREUM-[0-9a-f]{16}$/);
  });

  it("refuses to start live production without deposit keys, and never accepts a private key", () => {
    const live = { NODE_ENV: "production", SANDBOX: "false", INTERNAL_API_TOKEN: "x".repeat(32), SECRETS_KEY: Buffer.alloc(32, 1).toString("base64") };
    expect(() => loadConfig(live)).to.throw(/XPUB_BTC must be set in production.*XPUB_ETH.*XPUB_TRON/);
    expect(() => loadConfig({ ...live, SERVICES: "merchants" })).not.to.throw();
    expect(() => loadConfig({ XPUB_ETH: BIP32_V1.masterPrivate })).to.throw(/XPUB_ETH must be an extended PUBLIC key/);
    expect(loadConfig({}).depositXpubs.BITCOIN).to.equal(TEST_DEPOSIT_XPUBS.BITCOIN);
    const own = loadConfig({ ...live, XPUB_BTC: BIP32_V1.m0H, XPUB_ETH: BIP32_V1.m0H_1, XPUB_TRON: BIP32_V1.m0H_1_2H });
    expect(own.depositXpubs.ETHEREUM).to.equal(BIP32_V1.m0H_1);
  });
});
