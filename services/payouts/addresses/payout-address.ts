import { bech32, bech32m, createBase58check } from "@scure/base";
import { sha256 } from "@noble/hashes/sha2.js";
import { invalid } from "../../platform/errors.ts";
import { toChecksumAddress } from "../../orders/addresses/evm-address.ts";

/** Which chain a deployment pays out on: mainnet, or testnet when its deposit keys are testnet keys. */
export type Chain = "mainnet" | "testnet";

const base58check = createBase58check(sha256);

/** A refusal naming `address` and the rule it breaks (400 INVALID_REQUEST). */
const bad = (rule: string) => invalid("INVALID_REQUEST", `address: ${rule}`);

/**
 * Checks a payout address for its network and chain and returns its
 * canonical spelling (what is stored and compared for DESTINATION_EXISTS):
 * bech32 in lower case, EVM addresses in EIP-55 mixed case, base58 as given.
 * Throws 400 INVALID_REQUEST naming `address` and the rule otherwise.
 */
export function canonicalPayoutAddress(network: string, address: string, chain: Chain): string {
  switch (network) {
    case "BITCOIN":
      return bitcoinAddress(address, chain);
    case "ETHEREUM":
      return ethereumAddress(address);
    case "TRON":
      return tronAddress(address);
    default:
      throw bad(`payouts on the ${network} network are not supported`);
  }
}

/**
 * BITCOIN: segwit (BIP-173 bech32 for witness version 0 with a 20- or
 * 32-byte program; BIP-350 bech32m for version 1 with a 32-byte program,
 * i.e. taproot), or base58check P2PKH / P2SH. Later witness versions are
 * valid bech32m but refused: coins sent to them are spendable by anyone until
 * a soft fork gives them meaning.
 */
function bitcoinAddress(address: string, chain: Chain): string {
  const hrp = chain === "mainnet" ? "bc" : "tb";
  if (/^(bc|tb|bcrt)1/i.test(address)) {
    if (address !== address.toLowerCase() && address !== address.toUpperCase()) throw bad("a bech32 address must not mix upper and lower case");
    const lower = address.toLowerCase();
    if (!lower.startsWith(`${hrp}1`)) throw bad(`must be a Bitcoin ${chain} address (bech32 prefix "${hrp}1")`);
    let decoded: { prefix: string; words: number[] } | undefined;
    let encoding: "bech32" | "bech32m" | undefined;
    try {
      decoded = bech32.decode(lower as `${string}1${string}`, 90);
      encoding = "bech32";
    } catch {
      try {
        decoded = bech32m.decode(lower as `${string}1${string}`, 90);
        encoding = "bech32m";
      } catch {
        throw bad("is not a valid bech32/bech32m segwit address (bad characters or checksum)");
      }
    }
    const [version, ...rest] = decoded.words;
    if (version === undefined || version > 16) throw bad("has an invalid segwit witness version");
    let program: Uint8Array;
    try {
      program = bech32.fromWords(rest);
    } catch {
      throw bad("has an invalid segwit witness program (padding)");
    }
    if (version === 0) {
      if (encoding !== "bech32") throw bad("a witness version 0 address must use the bech32 checksum (BIP-173), not bech32m");
      if (program.length !== 20 && program.length !== 32) throw bad("a witness version 0 program must be 20 or 32 bytes");
      return lower;
    }
    if (encoding !== "bech32m") throw bad("a witness version 1+ address must use the bech32m checksum (BIP-350)");
    if (version !== 1 || program.length !== 32) throw bad("only witness version 0 and taproot (version 1, 32 bytes) addresses are accepted");
    return lower;
  }
  let payload: Uint8Array;
  try {
    payload = base58check.decode(address);
  } catch {
    throw bad("is not a valid Bitcoin address (bech32 segwit or base58check P2PKH/P2SH with a valid checksum)");
  }
  const versions = chain === "mainnet" ? [0x00, 0x05] : [0x6f, 0xc4];
  if (payload.length !== 21 || !versions.includes(payload[0]!)) {
    throw bad(
      `must be a Bitcoin ${chain} P2PKH or P2SH address (base58check version ${versions.map((v) => `0x${v.toString(16).padStart(2, "0")}`).join(" or ")}, 20-byte hash)`,
    );
  }
  return address;
}

/** ETHEREUM: 0x + 40 hex digits; mixed case must carry a valid EIP-55 checksum (all lower or all upper case carries none). */
function ethereumAddress(address: string): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw bad("must be 0x followed by 40 hexadecimal digits");
  const hex = address.slice(2);
  const checksummed = toChecksumAddress(address);
  if (hex !== hex.toLowerCase() && hex !== hex.toUpperCase() && address !== checksummed) {
    throw bad("mixed case must be a valid EIP-55 checksum (a mistyped letter?)");
  }
  return checksummed;
}

/** TRON: base58check of 21 bytes, the first 0x41. */
function tronAddress(address: string): string {
  let payload: Uint8Array;
  try {
    payload = base58check.decode(address);
  } catch {
    throw bad("is not a valid TRON address (base58check with a valid checksum)");
  }
  if (payload.length !== 21 || payload[0] !== 0x41) throw bad("must be a TRON address: 21 bytes with the 0x41 prefix (starts with T)");
  return address;
}
