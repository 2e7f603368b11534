import { bech32 } from "@scure/base";
import { sha256 } from "@noble/hashes/sha2.js";
import { ripemd160 } from "@noble/hashes/legacy.js";

/**
 * BIP84 native segwit (P2WPKH) address: bech32 of witness version 0 and
 * HASH160 of the compressed public key; hrp "bc" on mainnet, "tb" on testnet.
 */
export function p2wpkhAddress(compressedPublicKey: Uint8Array, testnet: boolean): string {
  if (compressedPublicKey.length !== 33) throw new Error("P2WPKH needs a 33-byte compressed public key");
  const program = ripemd160(sha256(compressedPublicKey));
  return bech32.encode(testnet ? "tb" : "bc", [0, ...bech32.toWords(program)]);
}
