import { toChecksumAddress } from "./evm-address.ts";

const EVM = /^0x[0-9a-fA-F]{40}$/i;
const BECH32 = /^(bc|tb|bcrt)1[02-9ac-hj-np-z]+$/i;

/**
 * The spelling orders store an address in, from however a chain watcher
 * reports it: EVM addresses are case-insensitive hex (node RPCs and logs give
 * them in lower case; orders store EIP-55), bech32 is case-insensitive but
 * stored in lower case (upper case is legal, e.g. in QR codes). Base58
 * (TRON) is case-sensitive and kept as given.
 */
export function canonicalDepositAddress(address: string): string {
  if (EVM.test(address)) return toChecksumAddress(address);
  if (BECH32.test(address) && (address === address.toUpperCase() || address === address.toLowerCase())) return address.toLowerCase();
  return address;
}
