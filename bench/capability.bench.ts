/**
 * Capability check cost: `authorize` (verify every block's tag chain + expiry + rights + objects +
 * cost) for chains of 1, 2 and 4 blocks, against the floor — raw `createHmac` chained over the
 * same block bytes plus `timingSafeEqual` — in the same run. Goal ≤ 1.5×.
 *
 * Parsed tokens are cached by string (token.ts), the tag chain is recomputed on every call, so
 * the warm rows measure what a runtime pays per call with a token it has seen. The "first sight"
 * row measures the same with parsing (base64url, JSON, object normalisation) on every call.
 * No store: revocation and budgets cost one store round trip each, measured by the store benches.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Harness } from "./harness.js";
import { attenuate } from "../src/capability/attenuate.js";
import { createCapabilityAuthority } from "../src/capability/authority.js";
import { verifyChain } from "../src/capability/chain.js";
import { keyRingFromMap } from "../src/capability/keys.js";
import { decodeToken, parseToken } from "../src/capability/token.js";
import { checkRequest } from "../src/capability/authorize.js";

const rawKey = Buffer.alloc(32, 0x42);
const keys = keyRingFromMap({ bench: rawKey.toString("base64") }, "bench keys");
const authority = createCapabilityAuthority({ keys });
const request = { op: "read", target: "path:/ws/src/lib/a.ts", cost: 1, tool: "file_view", args: { limit: 50 } };

function chainOf(blocks: number): string {
  let token = authority.issue({
    rights: ["read", "write"],
    objects: ["path:/ws", "host:*.example.com"],
    max_cost: 10,
    args: [{ arg: "limit", max: 500 }],
    ttl_ms: 3_600_000,
  });
  const steps = [
    { rights: ["read"] },
    { objects: ["path:/ws/src"] },
    { max_cost: 5 },
    { objects: ["path:/ws/src/lib"] },
  ];
  for (let i = 1; i < blocks; i++) token = attenuate(token, steps[i - 1]!);
  return token;
}

/** The floor: the same HMAC chain over the same bytes, with a raw key, and a constant-time compare. */
function rawVerifier(token: string): () => boolean {
  const { bytes, tag } = parseToken(token);
  return () => {
    let t = createHmac("sha256", rawKey).update(bytes[0]!).digest();
    for (let i = 1; i < bytes.length; i++) t = createHmac("sha256", t).update(bytes[i]!).digest();
    return timingSafeEqual(t, tag);
  };
}

export default async function (h: Harness): Promise<void> {
  for (const n of [1, 2, 4]) {
    const token = chainOf(n);
    const check = await authority.authorize(token, request);
    if (!check.allowed) throw new Error(`bench token of ${n} blocks was refused: ${check.reason}`);
    await h.compare({
      area: "capability",
      hot_path: `verify + authorize, ${n}-block chain`,
      toolgate: () => authority.authorize(token, request),
      peer: { name: "createHmac chain + timingSafeEqual", fn: rawVerifier(token) },
      goal: { op: "<=", value: 1.5, label: "≤ 1.5×" },
      batch: 500,
      rounds: 60,
      warmup: 10,
    });
  }

  // The synchronous core of the same check (what `authorize` does before it returns its promise):
  // separates the crypto and the checks from the cost of the async API, which the caller's
  // `await` pays once per call whatever the work (store round trips need it).
  const key = keys.key("bench")!;
  const one = chainOf(1);
  await h.compare({
    area: "capability",
    hot_path: "verify + check, 1-block chain, sync core",
    toolgate: () => {
      const p = parseToken(one);
      return verifyChain(key, p.bytes, p.tag) && checkRequest(p.grant, request) === null;
    },
    peer: { name: "createHmac chain + timingSafeEqual", fn: rawVerifier(one) },
    goal: { op: "<=", value: 1.5, label: "≤ 1.5×" },
    batch: 500,
    rounds: 60,
    warmup: 10,
    note: "authorize minus its promise; the authorize rows include one await per call",
  });

  // First sight of a token: decode (no cache) + verify + the local checks, 4 blocks.
  const token = chainOf(4);
  await h.compare({
    area: "capability",
    hot_path: "decode + verify + check, 4 blocks, uncached",
    toolgate: () => {
      const p = decodeToken(token);
      return verifyChain(key, p.bytes, p.tag) && checkRequest(p.grant, request) === null;
    },
    peer: { name: "createHmac chain + timingSafeEqual", fn: rawVerifier(token) },
    batch: 200,
    note: "parsing every call; the runtime caches parsed tokens by string",
  });
}
