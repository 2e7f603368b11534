import { createHash } from "node:crypto";
import type { DepositNetwork } from "../../platform/config.ts";
import { derivePublicChild, parseExtendedPublicKey, publicKeyOf, ExtendedKeyError } from "./extended-public-key.ts";
import { p2wpkhAddress } from "./bitcoin-address.ts";
import { evmAddress } from "./evm-address.ts";
import { tronAddress } from "./tron-address.ts";

/** The external (receive) chain of an account key: addresses are m/…/account'/0/index. */
const RECEIVE_CHAIN = 0;

/** How each network of the asset registry turns a public key into an address. */
const ENCODERS: Record<DepositNetwork, (pub: Uint8Array, testnet: boolean) => string> = {
  BITCOIN: (pub, testnet) => p2wpkhAddress(pub, testnet),
  ETHEREUM: (pub) => evmAddress(pub),
  TRON: (pub) => tronAddress(pub),
};

interface DepositAddressSource {
  network: DepositNetwork;
  /**
   * Identifies the configured key (network + a digest of its public key and
   * chain code): indexes are allocated per key, so a new key starts at 0 and
   * two assets of one network (ETH, USDC_ETH) never share an address.
   */
  keyId: string;
  address(index: number): string;
}

export interface DepositAddresses {
  forNetwork(network: string): DepositAddressSource | undefined;
}

/**
 * Builds one address source per configured account-level extended public key.
 * Only public derivation happens here: the service can hand out addresses
 * but cannot spend from them. A bad key fails the start, naming the network.
 */
export function createDepositAddresses(xpubs: Readonly<Partial<Record<DepositNetwork, string>>>): DepositAddresses {
  const sources = new Map<string, DepositAddressSource>();
  for (const [network, text] of Object.entries(xpubs) as [DepositNetwork, string | undefined][]) {
    if (!text || !ENCODERS[network]) continue;
    let parsed;
    try {
      parsed = parseExtendedPublicKey(text);
    } catch (err) {
      if (err instanceof ExtendedKeyError) throw new Error(`deposit key for ${network} ${err.message}`);
      throw err;
    }
    const receive = derivePublicChild(parsed.key, [RECEIVE_CHAIN]);
    const encode = ENCODERS[network];
    const digest = createHash("sha256").update(publicKeyOf(parsed.key)).update(parsed.key.chainCode!).digest("hex").slice(0, 16);
    sources.set(network, {
      network,
      keyId: `${network}-${digest}`,
      address: (index) => encode(publicKeyOf(derivePublicChild(receive, [index])), parsed.testnet),
    });
  }
  return { forNetwork: (network) => sources.get(network) };
}
