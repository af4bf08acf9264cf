import { describe, expect, it } from "vitest";
import { peerOf } from "../../../src/mcp/transports/http-sessions.js";

// The peer the HTTP bounds count: a process chooses its source address within what its host
// holds, so a peer is the whole of that (this machine's loopback, an IPv6 /64).
describe("peerOf", () => {
  it("makes every loopback address one peer, this machine", () => {
    const keys = new Set(
      ["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "::ffff:127.0.0.5", "::ffff:7f00:1"].map(
        (a) => peerOf(a).key,
      ),
    );
    expect(keys).toEqual(new Set(["loopback"]));
    expect(peerOf("127.0.0.9").label).toBe("this machine's clients (every loopback client counts as one peer)");
  });

  it("makes an IPv4 address itself, written plainly or mapped into IPv6", () => {
    expect(peerOf("192.0.2.7")).toEqual({ key: "ip:192.0.2.7", label: "peer 192.0.2.7" });
    expect(peerOf("::ffff:192.0.2.7")).toEqual(peerOf("192.0.2.7"));
    expect(peerOf("192.0.2.8").key).not.toBe(peerOf("192.0.2.7").key);
  });

  it("makes an IPv6 peer its /64, however the address is written", () => {
    const a = peerOf("2001:db8:1:2::1");
    expect(a).toEqual({ key: "ipv6:2001:db8:1:2", label: "peer 2001:db8:1:2::/64" });
    for (const same of [
      "2001:db8:1:2:ffff:ffff:ffff:ffff",
      "2001:0db8:0001:0002:0:0:0:9",
      "2001:db8:1:2::1%eth0",
      "2001:db8:1:2::192.0.2.1",
    ])
      expect(peerOf(same)).toEqual(a);
    expect(peerOf("2001:db8:1:3::1").key).not.toBe(a.key);
    expect(peerOf("fd00::2").key).toBe("ipv6:fd00:0:0:0");
  });
});
