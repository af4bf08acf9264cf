/**
 * The operator's egress configuration and the address rules, without a sandbox: every bad
 * entry is refused naming the field, what was expected and what arrived; the addresses refused
 * behind a name cover IPv4, IPv6 and IPv4 carried inside IPv6; a session decides in order
 * (capability, deny, allow, resolved address) with the real resolver.
 */
import { describe, expect, it } from "vitest";
import { embeddedV4, refusedClass } from "../../../src/tools/sandbox/egress/address.js";
import { egressPolicy, parseEntry } from "../../../src/tools/sandbox/egress/policy.js";
import { EgressSession } from "../../../src/tools/sandbox/egress/session.js";

const thrown = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("did not throw");
};

describe("addresses refused behind a name", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.5.6.7", "loopback"],
    ["::1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["192.168.1.1", "private"],
    ["fd12::1", "private"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["169.254.1.1", "link-local"],
    ["fe80::1", "link-local"],
    ["169.254.169.254", "cloud metadata"],
    ["fd00:ec2::254", "cloud metadata"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:a9fe:a9fe", "cloud metadata"],
    ["64:ff9b::10.0.0.1", "private"],
    ["2002:c0a8:0101::", "private"],
  ])("%s is %s", (address, cls) => {
    expect(refusedClass(address)).toBe(cls);
  });

  it("public addresses pass, IPv4 ones carried in IPv6 too", () => {
    for (const a of ["8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8", "203.0.113.7"]) expect(refusedClass(a)).toBeNull();
    expect(embeddedV4("::ffff:7f00:1")).toBe("127.0.0.1");
    expect(embeddedV4("2606:4700::1111")).toBeNull();
  });
});

describe("the operator's entries", () => {
  it("reads names, wildcards, addresses and ports", () => {
    expect(parseEntry("*.Example.org:443", "f")).toMatchObject({ address: null, ports: [443, 443] });
    expect(parseEntry("127.0.0.1:8000-8100", "f")).toMatchObject({ address: "127.0.0.1", ports: [8000, 8100] });
    expect(parseEntry("[::1]:8080", "f")).toMatchObject({ address: "::1", ports: [8080, 8080] });
    expect(parseEntry("[fd00::1]", "f")).toMatchObject({ address: "fd00::1", ports: null });
  });

  it("refuses a bad entry naming the field, what arrived and what is expected", () => {
    expect(thrown(() => egressPolicy({ allow: ["exa_mple.org"] }))).toMatch(
      /^egress\.allow\[0\]: "exa_mple\.org" does not parse .*; expected a host name \(wildcards as \*\.example\.org\), an IPv4 address or a bracketed IPv6 address/,
    );
    expect(thrown(() => egressPolicy({ allow: ["::1"] }))).toMatch(
      /egress\.allow\[0\]: "::1" is an IPv6 address without brackets/,
    );
    expect(thrown(() => egressPolicy({ allow: ["[1::2::3]"] }))).toMatch(/is not a valid IPv6 address in brackets/);
    expect(thrown(() => egressPolicy({ allow: [""] }))).toMatch(/is not a non-empty string/);
    expect(thrown(() => egressPolicy({ allow: ["https://registry.npmjs.org/"] }))).toMatch(
      /^egress\.allow\[0\]: "https:\/\/registry\.npmjs\.org\/" is a URL; write only its host \(and port\), e\.g\. "registry\.npmjs\.org:443"; expected a host name/,
    );
    expect(thrown(() => egressPolicy({ allow: ["http://user@10.0.0.5:8080/simple"] }))).toMatch(
      /"http:\/\/user@10\.0\.0\.5:8080\/simple" is a URL; write only its host \(and port\), e\.g\. "10\.0\.0\.5:8080";/,
    );
    expect(thrown(() => egressPolicy({ allow: "a.org" as unknown as string[] }))).toMatch(
      /^egress\.allow must be an array of host entries; received "a\.org"/,
    );
    expect(thrown(() => egressPolicy({ allow: [], deny: ["a.org:99999"] }))).toMatch(
      /^egress\.deny\[0\]: .*not a port/,
    );
  });

  it("refuses a bad secret or limit, naming the field and an example", () => {
    const secret = { host: "a.org", header: "authorization", value: "Bearer abcdef" };
    expect(thrown(() => egressPolicy({ allow: [], secrets: [{ ...secret, header: "bad header" }] }))).toMatch(
      /^egress\.secrets\[0\]\.header must be an HTTP header name, e\.g\. "authorization"; received "bad header"/,
    );
    expect(thrown(() => egressPolicy({ allow: [], secrets: [{ ...secret, value: "abc" }] }))).toMatch(
      /^egress\.secrets\[0\]\.value must be a string of at least 6 characters .*; received 3 characters/,
    );
    expect(thrown(() => egressPolicy({ allow: [], secrets: [{ ...secret, value: "abcdef\r\nx: y" }] }))).toMatch(
      /without line breaks/,
    );
    expect(thrown(() => egressPolicy({ allow: [], secrets: [{ ...secret, host: "::1" }] }))).toMatch(
      /^egress\.secrets\[0\]\.host: /,
    );
    expect(thrown(() => egressPolicy({ allow: [], limits: { max_bytes: -1 } }))).toMatch(
      /^egress\.limits\.max_bytes must be a positive integer; received -1; example 536870912 \(the default\)/,
    );
    expect(thrown(() => egressPolicy({ allow: [], limits: { speed: 1 } as never }))).toMatch(
      /^egress\.limits\.speed is not an egress limit; the limits are max_bytes, max_connections, connection_ms, connect_ms/,
    );
  });
});

describe("a session's decision, in order", () => {
  const session = (
    allow: string[],
    deny: string[] = [],
    capability?: (h: string, p: number) => Promise<string | null>,
  ) => new EgressSession({ policy: egressPolicy({ allow, deny }), ...(capability ? { capability } : {}) });

  it("capability first, then the deny-list, then the allow-list, then the resolved address", async () => {
    const no = async () => "outside";
    expect((await session(["localhost"], [], no).decide("localhost", 80, "http")).ok).toBe(false);
    const refused = async (s: EgressSession, host: string, port: number) => {
      const d = await s.decide(host, port, "connect");
      return d.ok ? "allowed" : d.denial?.reason;
    };
    expect(await refused(session(["localhost"], [], no), "localhost", 80)).toBe("not in capability");
    expect(await refused(session(["localhost"], ["localhost:80"]), "localhost", 80)).toBe("denied by operator");
    expect(await refused(session(["localhost:81"]), "localhost", 80)).toBe("not allowed by operator");
    expect(await refused(session(["localhost"]), "LOCALHOST.", 80)).toBe("resolves to a private address");
    expect(await refused(session(["localhost", "127.0.0.1:80"]), "localhost", 80)).toBe("allowed");
    // An address the deny-list names is refused behind any name that resolves to it.
    expect(await refused(session(["localhost", "127.0.0.1"], ["127.0.0.1"]), "localhost", 80)).toBe(
      "denied by operator",
    );
    // A host that is not a name or an address, and a port out of range.
    expect(await refused(session(["*.example.org"]), "a b", 80)).toBe("not allowed by operator");
    expect(await refused(session(["localhost"]), "localhost", 0)).toBe("not allowed by operator");
  });

  it("toolgate's own ports stay out of reach even when the address is named", async () => {
    const s = new EgressSession({ policy: egressPolicy({ allow: ["127.0.0.1"], ownPorts: [8765] }) });
    const d = await s.decide("127.0.0.1", 8765, "connect");
    expect(d.ok).toBe(false);
    expect(!d.ok && d.denial?.message).toMatch(/toolgate's own ports are never reachable from the sandbox/);
    expect((await s.decide("127.0.0.1", 8766, "connect")).ok).toBe(true);
  });
});
