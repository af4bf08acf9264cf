/**
 * Which resolved addresses the egress proxy refuses behind a name: the host's own and its
 * neighbours' (loopback, link-local, private ranges, carrier-grade NAT, the cloud metadata
 * address, unspecified, multicast and broadcast), in IPv4 and IPv6, an IPv4 address inside IPv6
 * (v4-mapped, v4-compatible, NAT64, 6to4) judged as the IPv4 address it carries. An allowed name
 * that resolves there is refused (no DNS rebinding through an allowed name) unless the operator
 * names the address itself.
 */
import { BlockList, isIP } from "node:net";

/** Why an address is refused, in words a model and an operator read. */
export type AddressClass =
  | "loopback"
  | "link-local"
  | "private"
  | "carrier-grade NAT"
  | "cloud metadata"
  | "unspecified"
  | "multicast"
  | "broadcast"
  | "reserved";

const V4: [string, number, AddressClass][] = [
  ["169.254.169.254", 32, "cloud metadata"],
  ["0.0.0.0", 8, "unspecified"],
  ["127.0.0.0", 8, "loopback"],
  ["10.0.0.0", 8, "private"],
  ["172.16.0.0", 12, "private"],
  ["192.168.0.0", 16, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT"],
  ["169.254.0.0", 16, "link-local"],
  ["192.0.0.0", 24, "reserved"],
  ["198.18.0.0", 15, "private"],
  ["224.0.0.0", 4, "multicast"],
  ["255.255.255.255", 32, "broadcast"],
  ["240.0.0.0", 4, "reserved"],
];
const V6: [string, number, AddressClass][] = [
  ["fd00:ec2::254", 128, "cloud metadata"],
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["fe80::", 10, "link-local"],
  ["fc00::", 7, "private"],
  ["fec0::", 10, "private"],
  ["ff00::", 8, "multicast"],
];

const lists = [...V4.map((e) => [...e, "ipv4"] as const), ...V6.map((e) => [...e, "ipv6"] as const)].map(
  ([net, prefix, cls, family]) => {
    const list = new BlockList();
    list.addSubnet(net, prefix, family);
    return { list, cls, family };
  },
);

/** The IPv4 address an IPv6 address carries (::ffff:a.b.c.d, ::a.b.c.d, 64:ff9b::/96, 2002::/16), else null. */
export function embeddedV4(address: string): string | null {
  if (isIP(address) !== 6) return null;
  const words = expand(address);
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zero = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zero(0, 5) && words[5] === 0xffff) return v4(words[6]!, words[7]!);
  if (zero(0, 6) && (words[6]! !== 0 || words[7]! > 1)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x64 && words[1] === 0xff9b && zero(2, 6)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!);
  return null;
}

/** The eight 16-bit words of an IPv6 address (an embedded dotted quad included). */
function expand(address: string): number[] {
  let text = address.toLowerCase().split("%")[0]!;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, quad.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const parse = (s: string) => (s === "" ? [] : s.split(":").map((w) => parseInt(w, 16)));
  const h = parse(head);
  const t = tail === undefined ? [] : parse(tail);
  return [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
}

/** The class that makes `address` one the proxy refuses behind a name, or null for a public address. */
export function refusedClass(address: string): AddressClass | null {
  const family = isIP(address);
  if (family === 0) return "reserved";
  const inner = embeddedV4(address);
  if (inner !== null) return refusedClass(inner);
  const fam = family === 4 ? "ipv4" : "ipv6";
  for (const { list, cls, family: f } of lists) if (f === fam && list.check(address, fam)) return cls;
  return null;
}
