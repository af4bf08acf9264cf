import { describe, expect, it } from "vitest";
import { intersectObjects, objectWithin, parseObject } from "../../src/capability/objects.js";

const within = (inner: string, outer: string) => objectWithin(parseObject(inner), parseObject(outer));
const error = (text: string) => {
  try {
    parseObject(text);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`${text} parsed`);
};

describe("path objects: segment boundaries and traversal", () => {
  it("contains its own subtree on whole segments only (prefix confusion)", () => {
    expect(within("path:/ws/a.txt", "path:/ws")).toBe(true);
    expect(within("path:/ws", "path:/ws")).toBe(true);
    expect(within("path:/ws2", "path:/ws")).toBe(false);
    expect(within("path:/ws2/a", "path:/ws")).toBe(false);
    expect(within("path:/w", "path:/ws")).toBe(false);
    expect(within("path:/anything", "path:/")).toBe(true);
  });

  it("resolves . and .. before comparing, so traversal cannot leave the prefix", () => {
    expect(parseObject("path:/ws/../etc").text).toBe("path:/etc");
    expect(within("path:/ws/../etc/passwd", "path:/ws")).toBe(false);
    expect(within("path:/ws/./a", "path:/ws")).toBe(true);
    expect(parseObject("path:/ws/./a").text).toBe("path:/ws/a");
    expect(parseObject("path:/../../etc").text).toBe("path:/etc");
    expect(within("path:/ws/a/../../ws2", "path:/ws")).toBe(false);
  });

  it("makes a trailing slash and doubled slashes irrelevant", () => {
    expect(parseObject("path:/ws/").text).toBe("path:/ws");
    expect(parseObject("path://ws//a///b/").text).toBe("path:/ws/a/b");
    expect(within("path:/ws//a", "path:/ws/")).toBe(true);
    expect(within("path:/ws2//a", "path:/ws/")).toBe(false);
  });

  it("refuses percent-encoded sequences instead of guessing how to decode them", () => {
    expect(error("path:/ws/%2e%2e/etc")).toMatchInlineSnapshot(
      `"object "path:/ws/%2e%2e/etc" contains the percent-encoded sequence %2e; pass the decoded filesystem path (toolgate refuses URL encoding in paths rather than guess how to decode it)"`,
    );
    expect(() => parseObject("path:/ws%2Fsecret")).toThrow(/percent-encoded sequence %2F/);
    // A lone % that encodes nothing is an ordinary character.
    expect(parseObject("path:/ws/100%").text).toBe("path:/ws/100%");
  });

  it("refuses relative paths and NUL bytes", () => {
    expect(error("path:ws/a")).toMatchInlineSnapshot(
      `"object "path:ws/a" is not an absolute path; write it from the root, e.g. path:/ws/src"`,
    );
    expect(() => parseObject("path:/ws/a\0b")).toThrow(/NUL/);
  });
});

describe("host objects: label-boundary wildcards", () => {
  it("matches *.example.com on label boundaries, at any depth, but not the apex", () => {
    expect(within("host:api.example.com", "host:*.example.com")).toBe(true);
    expect(within("host:a.b.example.com", "host:*.example.com")).toBe(true);
    expect(within("host:*.a.example.com", "host:*.example.com")).toBe(true);
    expect(within("host:example.com", "host:*.example.com")).toBe(false);
    expect(within("host:api.example.com.evil.net", "host:*.example.com")).toBe(false);
    expect(within("host:evilexample.com", "host:*.example.com")).toBe(false);
    expect(within("host:*.example.com", "host:api.example.com")).toBe(false);
  });

  it("compares exact hosts case-insensitively and ignores one trailing dot", () => {
    expect(within("host:API.Example.COM.", "host:api.example.com")).toBe(true);
    expect(within("host:api.example.com.evil.net", "host:api.example.com")).toBe(false);
  });

  it("refuses bad labels, inner wildcards and a wildcard over a top-level domain", () => {
    expect(error("host:a.*.example.com")).toMatchInlineSnapshot(
      `"object "host:a.*.example.com" has the label "*", which is not letters, digits and inner hyphens (1–63); use punycode for international names; a wildcard is allowed only as the whole first label, e.g. host:*.example.com"`,
    );
    expect(() => parseObject("host:*.com")).toThrow(/wildcard over a top-level domain/);
    expect(() => parseObject("host:exa_mple.com")).toThrow(/label "exa_mple"/);
    expect(() => parseObject("host:bücher.de")).toThrow(/punycode/);
  });
});

describe("host objects: ports", () => {
  it("a name without a port holds every port; a port or range holds only those", () => {
    expect(within("host:api.example.com:443", "host:api.example.com")).toBe(true);
    expect(within("host:api.example.com:443", "host:*.example.com:443")).toBe(true);
    expect(within("host:api.example.com:8080", "host:*.example.com:8000-8999")).toBe(true);
    expect(within("host:api.example.com:8000-8100", "host:*.example.com:8000-8999")).toBe(true);
    expect(within("host:api.example.com", "host:api.example.com:443")).toBe(false);
    expect(within("host:api.example.com:22", "host:api.example.com:443")).toBe(false);
    expect(within("host:api.example.com:8000-9000", "host:*.example.com:8000-8999")).toBe(false);
    expect(within("host:evil.net:443", "host:*.example.com:443")).toBe(false);
  });

  it("normalises a one-port range and a trailing dot before the port", () => {
    expect(parseObject("host:API.example.com.:443-443")).toMatchObject({
      text: "host:api.example.com:443",
      host: "api.example.com",
      ports: [443, 443],
    });
  });

  it("refuses a port out of range, a reversed range, an empty port and an IPv6 address, saying how to write one", () => {
    expect(error("host:api.example.com:0")).toMatchInlineSnapshot(
      `"object "host:api.example.com:0" has "0" after the name, which is not a port (1–65535) or a range low-high, and IPv6 addresses are not host objects; write the name, then :PORT or :LOW-HIGH, e.g. host:api.example.com:443 or host:*.example.com:8000-8999"`,
    );
    expect(() => parseObject("host:api.example.com:65536")).toThrow(/not a port/);
    expect(() => parseObject("host:api.example.com:9000-8000")).toThrow(/not a port/);
    expect(() => parseObject("host:api.example.com:")).toThrow(/not a port/);
    expect(() => parseObject("host:::1")).toThrow(/IPv6 addresses are not host objects/);
  });

  it("intersects name and ports exactly, though neither object holds the other", () => {
    const meet = (a: string[], b: string[]) =>
      intersectObjects(a.map(parseObject), b.map(parseObject)).map((o) => o.text);
    expect(meet(["host:*.example.com:443"], ["host:api.example.com"])).toEqual(["host:api.example.com:443"]);
    expect(meet(["host:*.example.com:1-500"], ["host:api.example.com:400-900"])).toEqual([
      "host:api.example.com:400-500",
    ]);
    expect(meet(["host:api.example.com:22"], ["host:api.example.com:443"])).toEqual([]);
    expect(meet(["host:a.example.com:443"], ["host:b.example.com"])).toEqual([]);
  });
});

describe("repo, tenant and tool objects", () => {
  it("repo:owner/name is case-insensitive; owner/* holds every repo of the owner only", () => {
    expect(within("repo:Acme/API", "repo:acme/api")).toBe(true);
    expect(within("repo:acme/api", "repo:acme/*")).toBe(true);
    expect(within("repo:acmex/api", "repo:acme/*")).toBe(false);
    expect(within("repo:acme/api-2", "repo:acme/api")).toBe(false);
    expect(error("repo:acme")).toMatchInlineSnapshot(
      `"object "repo:acme" is not owner/name; e.g. repo:acme/api, or repo:acme/* for every repository of acme"`,
    );
  });

  it("tenant and tool are exact and never match another kind", () => {
    expect(within("tenant:acme", "tenant:acme")).toBe(true);
    expect(within("tenant:acme2", "tenant:acme")).toBe(false);
    expect(within("tool:file_view", "tool:file_view")).toBe(true);
    expect(within("tool:file_view", "path:/")).toBe(false);
    expect(error("tenant:")).toMatchInlineSnapshot(
      `"object "tenant:" has an empty or unusual identifier; use letters, digits and _ . : @ - (at most 128), e.g. tenant:acme"`,
    );
  });

  it("refuses an object without a known kind, naming the kinds", () => {
    expect(error("/ws")).toMatchInlineSnapshot(
      `"object "/ws" has no known kind (expected one of path, host, repo, tenant, tool); write it as kind:value, e.g. path:/ws, host:api.example.com, host:*.example.com, host:api.example.com:443, repo:owner/name, tenant:acme, tool:file_view"`,
    );
  });
});

describe("intersection", () => {
  it("keeps the smaller cone where two meet and drops disjoint ones", () => {
    const a = ["path:/ws", "host:*.example.com", "tenant:acme"].map(parseObject);
    const b = ["path:/ws/src", "host:api.example.com", "path:/etc"].map(parseObject);
    expect(intersectObjects(a, b).map((o) => o.text)).toEqual(["path:/ws/src", "host:api.example.com"]);
  });
});
