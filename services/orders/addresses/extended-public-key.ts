import { HDKey } from "@scure/bip32";
import { createBase58check } from "@scure/base";
import { sha256 } from "@noble/hashes/sha2.js";

const base58check = createBase58check(sha256);

/**
 * Version bytes of serialized extended PUBLIC keys (BIP32 xpub/tpub, SLIP-132
 * ypub/zpub/upub/vpub). Wallets export BIP84 accounts as zpub/vpub; the
 * derivation is the same, only the label differs, so any of them is accepted.
 */
const PUBLIC_VERSIONS: Record<number, { prefix: string; testnet: boolean }> = {
  0x0488b21e: { prefix: "xpub", testnet: false },
  0x049d7cb2: { prefix: "ypub", testnet: false },
  0x04b24746: { prefix: "zpub", testnet: false },
  0x043587cf: { prefix: "tpub", testnet: true },
  0x044a5262: { prefix: "upub", testnet: true },
  0x045f1cf6: { prefix: "vpub", testnet: true },
};

/** The BIP32 boundary: children below it are derivable from a public key alone. */
const MAX_NON_HARDENED_INDEX = 0x7fffffff;

export class ExtendedKeyError extends Error {}

interface ExtendedPublicKey {
  key: HDKey;
  prefix: string;
  testnet: boolean;
}

/**
 * Parses an extended public key. A private key (xprv…) is refused outright:
 * this service derives deposit addresses only and must never hold spending keys.
 */
export function parseExtendedPublicKey(text: string): ExtendedPublicKey {
  let bytes: Uint8Array;
  try {
    bytes = base58check.decode(text.trim());
  } catch {
    throw new ExtendedKeyError("is not a base58check extended key");
  }
  if (bytes.length !== 78) throw new ExtendedKeyError("is not an extended key (wrong length)");
  const version = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, false);
  if (bytes[45] === 0) throw new ExtendedKeyError("is a private extended key; configure the public key (xpub/zpub/tpub/vpub) only");
  const known = PUBLIC_VERSIONS[version];
  if (!known) throw new ExtendedKeyError(`has unknown version bytes 0x${version.toString(16)}`);
  // The private version is never used (no private key is ever parsed): any u32 satisfies the library.
  const key = HDKey.fromExtendedKey(text.trim(), { public: version, private: 0 });
  return { key, ...known };
}

/**
 * Non-hardened public child derivation along `path` (BIP32 CKDpub). The
 * library skips an index whose tweak is invalid (probability ~2^-127); we
 * refuse instead, so an index always names exactly one key.
 */
export function derivePublicChild(key: HDKey, path: readonly number[]): HDKey {
  let node = key;
  for (const index of path) {
    if (!Number.isInteger(index) || index < 0 || index > MAX_NON_HARDENED_INDEX) {
      throw new ExtendedKeyError(`index ${index} is not a non-hardened child index`);
    }
    const child = node.deriveChild(index);
    if (child.index !== index) throw new ExtendedKeyError(`index ${index} has no valid child key`);
    node = child;
  }
  return node;
}

export function publicKeyOf(node: HDKey): Uint8Array {
  const pub = node.publicKey;
  if (!pub) throw new ExtendedKeyError("node has no public key");
  return pub;
}
