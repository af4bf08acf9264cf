/**
 * Monotonic delegation as a property (docs/authority.md, C_c ⪯ C_p): for random chains — including
 * hand-made blocks that try to widen any component — and random requests, whatever a child
 * allows its parent allows too. And `attenuate` only ever yields such children.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { attenuate, AttenuationError } from "../../src/capability/attenuate.js";
import type { Block } from "../../src/capability/block.js";
import { createCapabilityAuthority } from "../../src/capability/authority.js";
import { nextTag } from "../../src/capability/chain.js";
import type { NarrowerInput } from "../../src/capability/input.js";
import { keyRingFromMap } from "../../src/capability/keys.js";
import { blockBytes, encodeToken, parseToken } from "../../src/capability/token.js";
import { KEY_K1, T0 } from "./support.js";

const clock = { now: T0 };
// No store: budgets are left out so that asking twice has no side effect.
const authority = createCapabilityAuthority({ keys: keyRingFromMap({ k1: KEY_K1 }, "test"), now: () => clock.now });

const RIGHTS = ["read", "write", "execute", "connect"];
const OBJECTS = [
  "path:/",
  "path:/ws",
  "path:/ws/a",
  "path:/ws/a/b",
  "path:/ws2",
  "path:/etc",
  "host:*.example.com",
  "host:api.example.com",
  "host:*.api.example.com",
  "host:x.api.example.com",
  "host:example.com",
  "repo:acme/*",
  "repo:acme/api",
  "tool:file_view",
  "tool:bash_execute",
  "tenant:t1",
];
const TARGETS = [
  ...OBJECTS.filter((o) => !o.includes("*")),
  "path:/ws/a/../../etc",
  "path:/ws//a/./b/c",
  "path:/ws2/a",
  "host:api.example.com.evil.net",
  "host:y.x.api.example.com",
  "repo:acme/web",
];

// Biased toward read on path:/ws… so that many requests pass every block and the property
// is exercised on allowed calls, not only on refusals.
const rights = fc.oneof(
  fc.subarray(RIGHTS, { minLength: 1 }),
  fc.subarray(RIGHTS).map((r) => [...new Set(["read", ...r])]),
);
const objects = fc.oneof(
  fc.subarray(OBJECTS, { minLength: 1, maxLength: 4 }),
  fc
    .subarray(OBJECTS, { maxLength: 3 })
    .chain((o) => fc.constantFrom("path:/", "path:/ws", "path:/ws/a").map((p) => [...new Set([p, ...o])])),
);
const argBounds = fc.array(
  fc.oneof(
    fc.record({ arg: fc.constant("n"), max: fc.integer({ min: -5, max: 15 }) }),
    fc.record({ arg: fc.constant("n"), min: fc.integer({ min: -5, max: 15 }) }),
    fc.record({ arg: fc.constant("c"), oneOf: fc.subarray(["x", "y", "z"], { minLength: 1 }) }),
  ),
  { minLength: 1, maxLength: 3 },
);
const components = {
  rights,
  objects,
  max_cost: fc.integer({ min: 0, max: 12 }),
  args: argBounds,
  expires_at: fc.integer({ min: T0 + 1, max: T0 + 200 }),
};
/** Any subset of components (for attenuate), or one component per block (for chains, so some calls pass every block).
 * */
const narrower = fc.record(components, { requiredKeys: [] });
const oneComponent: fc.Arbitrary<NarrowerInput> = fc.oneof(
  ...Object.entries(components).map(([k, arb]) => (arb as fc.Arbitrary<unknown>).map((v) => ({ [k]: v }))),
);
const request = fc.record({
  op: fc.oneof(fc.constant("read"), fc.constantFrom(...RIGHTS)),
  target: fc.oneof(
    { arbitrary: fc.constant("path:/ws/a/b/c"), weight: 2 },
    { arbitrary: fc.constantFrom(...TARGETS), weight: 1 },
  ),
  cost: fc.integer({ min: 0, max: 14 }),
  tool: fc.constantFrom("file_view", "bash_execute", "grep_search"),
  args: fc.record(
    { n: fc.integer({ min: -6, max: 16 }), c: fc.constantFrom("x", "y", "z", "w") },
    { requiredKeys: [] },
  ),
  // Mostly early, so that expiry does not hide every other component.
  at: fc.oneof(
    { arbitrary: fc.constant(T0), weight: 3 },
    { arbitrary: fc.integer({ min: T0, max: T0 + 220 }), weight: 1 },
  ),
});

/** Appends a block without any of attenuate's checks: what a malicious holder can do. */
function appendRaw(token: string, n: NarrowerInput, i: number): string {
  const p = parseToken(token);
  const block: Block = { id: `cap_raw${i}_${p.blocks.length}` };
  if (n.rights) block.rights = n.rights;
  if (n.objects) block.objects = n.objects;
  const pred: Block["pred"] = {};
  if (n.max_cost !== undefined) pred.max_cost = n.max_cost;
  if (n.args) pred.args = n.args;
  if (Object.keys(pred).length > 0) block.pred = pred;
  if (n.expires_at !== undefined) block.exp = n.expires_at;
  const bytes = blockBytes(block);
  return encodeToken([...p.bytes, bytes], nextTag(p.tag, bytes));
}

type Req = typeof request extends fc.Arbitrary<infer T> ? T : never;

async function allows(token: string, r: Req): Promise<boolean> {
  clock.now = r.at;
  const d = await authority.authorize(token, { op: r.op, target: r.target, cost: r.cost, tool: r.tool, args: r.args });
  return d.allowed;
}

let counter = 0;
describe("a child never allows what its parent refuses", () => {
  it("holds for random chains of hand-made blocks (wider ones included)", async () => {
    let childAllowed = 0;
    await fc.assert(
      fc.asyncProperty(
        rights,
        objects,
        fc.option(argBounds, { nil: undefined }),
        fc.array(oneComponent, { minLength: 1, maxLength: 3 }),
        fc.array(request, { minLength: 1, maxLength: 5 }),
        async (r, o, args, blocks, requests) => {
          clock.now = T0;
          const root = authority.issue({
            rights: r,
            objects: o,
            max_cost: 10,
            ...(args ? { args } : {}),
            expires_at: T0 + 100,
          });
          const chain = [root];
          for (const b of blocks) chain.push(appendRaw(chain.at(-1)!, b, counter++));
          for (const req of requests) {
            for (let i = chain.length - 1; i > 0; i--) {
              if (await allows(chain[i]!, req)) {
                childAllowed++;
                expect(await allows(chain[i - 1]!, req)).toBe(true);
              }
            }
          }
        },
      ),
      { numRuns: 300 },
    );
    // The property must not hold vacuously.
    expect(childAllowed).toBeGreaterThan(20);
  });

  it("attenuate either refuses (naming a component) or returns a child within its parent", async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        rights,
        objects,
        narrower,
        fc.array(request, { minLength: 1, maxLength: 5 }),
        async (r, o, n, requests) => {
          clock.now = T0;
          const parent = authority.issue({ rights: r, objects: o, max_cost: 10, expires_at: T0 + 100 });
          let child: string;
          try {
            child = attenuate(parent, n, { now: () => T0 });
          } catch (err) {
            expect(err).toBeInstanceOf(AttenuationError);
            return;
          }
          accepted++;
          for (const req of requests) if (await allows(child, req)) expect(await allows(parent, req)).toBe(true);
          // And attenuate's refusal is exact for rights: an accepted child states no right the parent lacks.
          expect(parseToken(child).grant.rights.every((x) => r.includes(x))).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
    expect(accepted).toBeGreaterThan(10);
  });
});
