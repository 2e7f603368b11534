import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * SSRF guard for webhook URLs. Outside sandbox mode a webhook may only reach
 * globally routable unicast addresses: loopback, private (RFC 1918), link-local
 * (169.254.0.0/16, which holds the cloud metadata services), CGNAT, unique-local
 * (fc00::/7), multicast, reserved and the IPv6 translation prefixes are refused.
 * IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
 */
export function forbiddenRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return "invalid";
  const range = ipaddr.process(address).range();
  return range === "unicast" ? undefined : range;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export class DestinationRefused extends Error {}

/**
 * Resolves the host at send time and checks every address it resolves to
 * (refusing the host if any one is forbidden, since the connection could use
 * any of them). The caller connects to exactly these addresses, so a DNS
 * answer that changes between check and connect (rebinding) cannot slip through.
 */
export async function resolveAllowedAddresses(hostname: string): Promise<ResolvedAddress[]> {
  const host = hostname.replace(/^\[(.*)\]$/, "$1");
  const literal = isIP(host);
  const addresses: ResolvedAddress[] = literal
    ? [{ address: host, family: literal as 4 | 6 }]
    : (
        await lookup(host, { all: true, verbatim: true }).catch((err: NodeJS.ErrnoException) => {
          throw new DestinationRefused(`could not resolve ${host}: ${err.code ?? err.message}`);
        })
      ).map((a) => ({ address: a.address, family: a.family as 4 | 6 }));
  if (addresses.length === 0) throw new DestinationRefused(`could not resolve ${host}`);
  for (const a of addresses) {
    const range = forbiddenRange(a.address);
    if (range) {
      throw new DestinationRefused(
        `refused: ${host} resolves to ${a.address}, a ${range} address (allowed only with SANDBOX=true or WEBHOOK_ALLOW_PRIVATE=true)`,
      );
    }
  }
  return addresses;
}
