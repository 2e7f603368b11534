import { createBase58check } from "@scure/base";
import { sha256 } from "@noble/hashes/sha2.js";
import { keccakAddressBytes } from "./evm-address.ts";

const base58check = createBase58check(sha256);
const TRON_PREFIX = 0x41;

/** TRON encodes the Ethereum-style 20 bytes behind 0x41, as base58check ("T…"). */
export function tronAddressFromBytes(twentyBytes: Uint8Array): string {
  if (twentyBytes.length !== 20) throw new Error("a TRON address is 20 bytes behind its prefix");
  return base58check.encode(Uint8Array.of(TRON_PREFIX, ...twentyBytes));
}

export function tronAddress(compressedPublicKey: Uint8Array): string {
  return tronAddressFromBytes(keccakAddressBytes(compressedPublicKey));
}
