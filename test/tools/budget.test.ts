/**
 * The operator's observation budget applies to the coding catalog (docs/observations.md, "Observation is a
 * budget"): under budgets 300 and 2000 every observation fits, and each tool's own continuation
 * still retrieves everything, because the tools end their window, page or capture within
 * `ctx.budget_tokens` instead of being cut by the gateway.
 */
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { countTokens } from "../../src/observation/tokens.js";
import { createGateway } from "../../src/runtime/gateway.js";
import type { Observation } from "../../src/core/observation.js";
import type { JsonValue } from "../../src/core/json.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { createBubblewrap } from "../../src/tools/sandbox/bubblewrap.js";
import { binaryAvailable } from "../support/require.js";
import { makeWorkspace } from "./fixtures.js";

const s = makeWorkspace("budget");
afterAll(() => s.cleanup());

// 500 lines of 150 characters: about 19,000 o200k tokens.
const lines = Array.from({ length: 500 }, (_, i) =>
  `${String(i + 1).padStart(4, "0")} ${"lorem ipsum dolor sit amet, consectetur adipiscing ".repeat(3)}`.slice(0, 150),
);
const big = s.write("src/big.txt", lines.join("\n") + "\n");
for (let i = 0; i < 60; i++) s.write(`dir/entry-with-a-long-name-${String(i).padStart(3, "0")}.txt`, "x\n");

// Paging grep_search under budget 300 runs ripgrep once per page (dozens of child processes):
// seconds on a quiet machine, more than a minute on a loaded two-core one.
describe.runIf(binaryAvailable("bwrap") && binaryAvailable("rg")).each([300, 2000])(
  "budget %i",
  { timeout: 180_000 },
  (budget) => {
    const gateway = createGateway({
      tools: createCodingCatalog({ workspace: s.root, sandbox: { launcher: createBubblewrap() } }),
      store: createMemoryStore(),
      audit: false,
      budgets: { default_tokens: budget },
    });
    afterAll(() => gateway.close());
    let n = 0;
    const call = async (tool: string, args: unknown, { cutByGateway = false } = {}): Promise<Observation> => {
      const o = await gateway.call({
        trajectory_id: `traj-budget-${budget}`,
        turn: n,
        call_id: `call-${n++}`,
        tool,
        arguments: args,
      });
      expect(o.ok, o.text).toBe(true);
      expect(countTokens(o.text)).toBeLessThanOrEqual(budget);
      // The tool ended its own output: the gateway never had to cut it.
      if (!cutByGateway) expect(o.truncated?.omitted_tokens ?? 0).toBe(0);
      return o;
    };

    /** Follows `next` until it ends; returns every page's output. */
    async function pages(tool: string, args: Record<string, JsonValue>): Promise<Record<string, JsonValue>[]> {
      const out: Record<string, JsonValue>[] = [];
      for (let a: Record<string, JsonValue> | undefined = args; a;) {
        const o = await call(tool, a);
        out.push(o.output as Record<string, JsonValue>);
        a = o.next?.arguments;
        expect(out.length).toBeLessThan(1000);
      }
      return out;
    }

    it("file_view: every window fits and the windows concatenated are the file", async () => {
      const got = await pages("file_view", { path: big, offset: 1, limit: 500 });
      expect(got.length).toBeGreaterThan(budget === 300 ? 100 : 5);
      const text = got.map((p) => (p.content as string).replace(/^ *\d+\t/gm, "")).join("\n") + "\n";
      expect(text).toBe(readFileSync(big, "utf8"));
    });

    it("file_view of a directory: every listing page fits and the pages list every entry", async () => {
      const got = await pages("file_view", { path: `${s.root}/dir`, offset: 1, limit: 500 });
      expect(got.flatMap((p) => p.entries as string[])).toEqual(
        Array.from({ length: 60 }, (_, i) => `entry-with-a-long-name-${String(i).padStart(3, "0")}.txt`),
      );
    });

    it("grep_search: every page fits and the pages hold every match, in order", async () => {
      const got = await pages("grep_search", { pattern: "^0[0-4]", path: `${s.root}/src` });
      const matches = got.flatMap((p) => (p.matches as { line: number }[]).map((m) => m.line));
      expect(matches).toEqual(Array.from({ length: 499 }, (_, i) => i + 1));
    });

    it("bash_execute: long output fits with head and tail, and the observation says bytes were left out", async () => {
      const o = await call("bash_execute", { command: "seq 1 3000 | sed 's/^/line /'" });
      expect(o.text).toContain("line 1\n");
      expect(o.text).toContain("line 3000");
      expect(o.text).toMatch(/the tool left out \d+ bytes; to see them, narrow the call/);
      expect(o.truncated?.by_tool).toEqual({ omitted: expect.any(Number), unit: "bytes" });
      expect((o.output as { stdout_omitted_bytes: number }).stdout_omitted_bytes).toBeGreaterThan(0);
    });

    it("bash_execute: both streams long, both kept within the budget", async () => {
      const o = await call("bash_execute", { command: "seq 1 5000; seq 1 5000 >&2" });
      expect(o.text).toContain("[stdout]");
      expect(o.text).toContain("[stderr]");
    });

    it("file_edit: the edit's observation fits; its snippet (no continuation) may be cut, never the post-state", async () => {
      const p = s.write(`edit-${budget}.txt`, lines.slice(0, 40).join("\n") + "\n");
      const o = await call(
        "file_edit",
        { path: p, old_str: lines[20]!, new_str: `${lines[20]!} edited` },
        { cutByGateway: true },
      );
      const version = (o.state as { version: string }).version;
      expect(version).toMatch(/^[0-9a-f]{64}$/);
      expect(o.text.split("\n")[1]).toContain(version);
    });
  },
);

describe.runIf(binaryAvailable("rg"))("per-tool budgets win over the tool's own budget_tokens", () => {
  const gateway = createGateway({
    tools: createCodingCatalog({ workspace: s.root }),
    store: createMemoryStore(),
    audit: false,
    budgets: { default_tokens: 2000, per_tool: { grep_search: 300 } },
  });
  afterAll(() => gateway.close());

  it("grep_search under per_tool 300, file_view under the default 2000", async () => {
    const grep = await gateway.call({
      trajectory_id: "t-per-tool",
      turn: 0,
      call_id: "g",
      tool: "grep_search",
      arguments: { pattern: "lorem", path: s.root },
    });
    expect(countTokens(grep.text)).toBeLessThanOrEqual(300);
    const view = await gateway.call({
      trajectory_id: "t-per-tool",
      turn: 0,
      call_id: "v",
      tool: "file_view",
      arguments: { path: big, offset: 1, limit: 500 },
    });
    expect(countTokens(view.text)).toBeLessThanOrEqual(2000);
    expect(countTokens(view.text)).toBeGreaterThan(1500);
  });
});
