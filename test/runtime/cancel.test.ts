import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Observation } from "../../src/core/observation.js";
import type { ProgressUpdate } from "../../src/core/tool.js";
import { createSqliteStore } from "../../src/idempotency/stores/sqlite.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { progressRelay } from "../../src/runtime/progress.js";
import type { Proposal } from "../../src/runtime/types.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { markedTree, pollUntil } from "../support/procs.js";
import { binaryAvailable } from "../support/require.js";
import { makeWorkspace } from "../tools/fixtures.js";
import { asRoot, handToNobody, tsxAsNobody } from "../tools/sandbox/unprivileged.js";

const here = dirname(fileURLToPath(import.meta.url));
const s = makeWorkspace("cancel");
const stateDir = mkdtempSync(join(tmpdir(), "tg-cancel-state-"));
afterAll(() => {
  s.cleanup();
  rmSync(stateDir, { recursive: true, force: true });
});

async function coding() {
  const store = await createSqliteStore({ path: join(stateDir, `state-${Math.random().toString(36).slice(2)}.db`) });
  const gateway = createGateway({
    tools: createCodingCatalog({ workspace: s.root, sandbox: { warn: () => {} } }),
    store,
    audit: false,
  });
  let n = 0;
  const propose = (tool: string, args: unknown, call_id = `call-${++n}`): Proposal => ({
    trajectory_id: "t-cancel",
    turn: 1,
    call_id,
    tool,
    arguments: args,
  });
  return { gateway, store, propose };
}

describe("progressRelay", () => {
  it("passes at most one report per interval, none after the call ended, and survives a receiver that fails", () => {
    let t = 0;
    const got: number[] = [];
    const relay = progressRelay(
      (u) => {
        got.push(u.elapsed_ms);
        if (u.elapsed_ms === 300) throw new Error("receiver failed");
        if (u.elapsed_ms === 600) return Promise.reject(new Error("receiver rejected")) as unknown as void;
      },
      250,
      () => t,
    );
    const at = (ms: number) => {
      t = ms;
      relay.report({ elapsed_ms: ms, message: "", counts: {} });
    };
    [0, 100, 249, 300, 400, 600, 700, 900].forEach(at);
    relay.end();
    at(5000);
    expect(got).toEqual([0, 300, 600, 900]);
  });
});

describe.runIf(binaryAvailable("bwrap"))("a cancelled call says what it left", () => {
  it("bash_execute cancelled while it runs: the whole tree is killed and the write is in doubt", async () => {
    const { gateway, store, propose } = await coding();
    const tree = markedTree();
    const abort = new AbortController();
    const pending = gateway.call(propose("bash_execute", { command: `${tree.escapee} sleep 120` }), {
      signal: abort.signal,
    });
    const ns = await tree.running(pending);
    abort.abort();
    const o = await pending;
    expect(o.error?.code).toBe("cancelled");
    expect(o.error?.detail).toMatchObject({ cancelled: "in_doubt", record_state: "IN_DOUBT" });
    const key = String(o.error!.detail!.key);
    expect(o.text.replace(key, "<key>")).toMatchInlineSnapshot(`
      "error cancelled: bash_execute (call call-1)
      bash_execute was cancelled by the caller after it had started and was stopped, so it may have done part of its work. The call is recorded as in doubt (key <key>), as a crash at that moment would leave it, and repeating it is refused until it is settled. Do not retry it under a new call_id; check the current state with a read-only tool or tell the user."
    `);
    expect((await store.records.get(key, Date.now()))?.state).toBe("IN_DOUBT");
    await tree.expectGone(ns);
    // The same call again is not run a second time: it is in doubt until settled.
    const again = await gateway.call({
      ...propose("bash_execute", { command: `${tree.escapee} sleep 120` }),
      call_id: "call-1",
    });
    expect(again.error?.code).toBe("in_doubt");
    await gateway.close();
  });

  it("a call cancelled before it started runs nothing, releases its key, and runs when proposed again", async () => {
    const { gateway, store, propose } = await coding();
    const file = s.write("before.txt", "one\n");
    const abort = new AbortController();
    abort.abort();
    const p = propose("file_edit", { path: file, old_str: "one", new_str: "two" });
    const o = await gateway.call(p, { signal: abort.signal });
    expect(o.error?.code).toBe("cancelled");
    expect(o.error?.detail).toEqual({ cancelled: "before_start" });
    expect(o.text).toMatchInlineSnapshot(`
      "error cancelled: file_edit (call call-1)
      file_edit was cancelled by the caller before it started; nothing was run and nothing changed. Call it again if it is still wanted."
    `);
    expect(readFileSync(file, "utf8")).toBe("one\n");
    expect(await store.records.list({ now: Date.now() })).toEqual([]);
    const ran = await gateway.call(p);
    expect(ran.ok).toBe(true);
    expect(readFileSync(file, "utf8")).toBe("two\n");
    await gateway.close();
  });

  it("progress reaches the caller through gateway.call while bash_execute runs, and none after it answered", async () => {
    const { gateway, propose } = await coding();
    const updates: ProgressUpdate[] = [];
    const pending = gateway.call(
      propose("bash_execute", { command: "echo started; while [ ! -e go-gateway ]; do sleep 0.05; done" }),
      { progress: (u) => void updates.push(u) },
    );
    expect(await pollUntil(() => updates.length >= 2, 20_000)).toBe(true);
    writeFileSync(join(s.root, "go-gateway"), "");
    const o: Observation = await pending;
    expect(o.ok).toBe(true);
    expect(updates.at(-1)!.counts).toEqual({ stdout_bytes: 8, stderr_bytes: 0 });
    const count = updates.length;
    await new Promise((r) => setTimeout(r, 1100));
    expect(updates.length).toBe(count);
    await gateway.close();
  });

  it.runIf(asRoot)("as uid 65534 (setpriv), a cancelled bash_execute leaves no process of its tree", async () => {
    const base = mkdtempSync(join(tmpdir(), "tg-cancel-nobody-"));
    const root = join(base, "ws");
    mkdirSync(root);
    handToNobody(base, root);
    try {
      const tree = markedTree();
      const child = tsxAsNobody(join(here, "child-cancel.ts"), [root, `${tree.escapee} sleep 120`]);
      let out = "";
      let err = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
      child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
      const exited = new Promise<void>((done) => child.on("close", () => done()));
      const ns = await tree.running(exited);
      child.stdin.write("cancel\n");
      await exited;
      const result = JSON.parse(out.trim().split("\n").pop() ?? "null") as {
        observation: Observation;
        record_state: string | null;
      } | null;
      expect(result, `the child printed its result (stderr: ${err})`).not.toBeNull();
      expect(result!.observation.error?.code).toBe("cancelled");
      expect(result!.observation.error?.detail).toMatchObject({ cancelled: "in_doubt" });
      expect(result!.record_state).toBe("IN_DOUBT");
      await tree.expectGone(ns);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
