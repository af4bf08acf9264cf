/**
 * The shared set-up of the framework adapter tests: the real coding catalog over a temporary
 * workspace (bash_execute in bubblewrap), one destructive (A3) tool beside it, a gateway with
 * capability keys, and the run's capability. Effects a test must count are lines the shell
 * appends to `effects.log` in the workspace, read back from the file.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCapabilityAuthority } from "../../src/capability/authority.js";
import { keyRingFromMap } from "../../src/capability/keys.js";
import type { ToolSpec } from "../../src/core/tool.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { createMemoryAuditSink } from "../../src/runtime/audit.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { afterEach, expect } from "vitest";
import type { markedTree } from "../support/procs.js";
import { binaryAvailable } from "../support/require.js";

/** Test-only key (never used outside these tests). */
const KEY = Buffer.alloc(32, 0x5a).toString("base64");
const S = "https://json-schema.org/draft/2020-12/schema";

/** bubblewrap is on PATH (else a loud skip, a failure under CI). */
export const sandboxed = binaryAvailable("bwrap");

/** The buggy script the agent fixes and the test that checks it. */
export const ADD_BUG = "echo $(($1 - $2))\n";
export const TEST_SH = '[ "$(sh add.sh 2 3)" = 5 ] && echo PASS || { echo FAIL; exit 1; }\n';
/** The command the agent runs: one line appended to effects.log per execution, then the test. */
export const RUN_TEST = "echo ran >> effects.log; sh test.sh";

export function codingWorld(prefix: string) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), `tg-adapters-${prefix}-`)));
  const root = join(base, "ws");
  mkdirSync(join(root, "docs"), { recursive: true });
  writeFileSync(join(root, "add.sh"), ADD_BUG);
  writeFileSync(join(root, "test.sh"), TEST_SH);
  writeFileSync(join(root, "docs", "notes.txt"), "notes for the sub-agent\n");
  writeFileSync(join(root, "old-a.txt"), "a\n");
  writeFileSync(join(root, "old-b.txt"), "b\n");

  const deletes: string[] = [];
  const fileDelete: ToolSpec = {
    name: "file_delete",
    description: "Deletes one file at the workspace root. Irreversible.",
    effect: "destructive",
    inputSchema: {
      $schema: S,
      type: "object",
      properties: { name: { type: "string", pattern: "^[a-z0-9_-]{1,40}\\.txt$", description: "File name." } },
      required: ["name"],
      additionalProperties: false,
    },
    grant: (args) => ({ op: "write", target: `path:${root}/${String(args.name)}` }),
    handler: (args) => {
      const name = String(args.name);
      deletes.push(name);
      rmSync(join(root, name));
      return { deleted: name };
    },
  } as ToolSpec;

  const keys = keyRingFromMap({ k1: KEY }, "adapter test keys", "k1");
  const store = createMemoryStore();
  const authority = createCapabilityAuthority({ keys, store });
  const audit = createMemoryAuditSink();
  const gateway = createGateway({
    tools: [...createCodingCatalog({ workspace: root }), fileDelete],
    store,
    authority,
    audit,
  });
  const capability = authority.issue({
    rights: ["read", "write", "execute"],
    objects: [`path:${root}`],
    ttl_ms: 3_600_000,
  });
  return {
    root,
    gateway,
    authority,
    audit,
    capability,
    deletes,
    /** Lines the shell appended to effects.log: executions of the counted command. */
    effects: () => {
      const p = join(root, "effects.log");
      return existsSync(p) ? readFileSync(p, "utf8").split("\n").filter(Boolean).length : 0;
    },
    read: (rel: string) => readFileSync(join(root, rel), "utf8"),
    exists: (rel: string) => existsSync(join(root, rel)),
    async close() {
      await gateway.close();
      rmSync(base, { recursive: true, force: true });
    },
  };
}

type MarkedTree = ReturnType<typeof markedTree>;

/** The shell command an aborted step runs: `tree`'s marked sleep (420 s), then an effect that must never happen. */
export const longCommand = (tree: MarkedTree) => `${tree.foreground}; echo late >> effects.log`;

/**
 * Aborts `controller` once the marked sleep of `tree` runs (the shell command of `running`, an
 * agent loop, reached it), and waits for the loop to end; says how it ended ("finished" or the
 * error's name) and the sleep's PID namespace (the sandbox's).
 */
export async function abortOnceRunning(tree: MarkedTree, controller: AbortController, running: Promise<unknown>) {
  const ended = running.then(
    () => "finished",
    (err: Error) => err.name,
  );
  const ns = await tree.running(running);
  controller.abort();
  return { ended: await ended, ns };
}

export type World = ReturnType<typeof codingWorld>;

/** `codingWorld` for a test file: each world made is closed after its test. */
export function worlds(prefix: string): () => World {
  const open: World[] = [];
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
  });
  return () => {
    const w = codingWorld(prefix);
    open.push(w);
    return w;
  };
}

/**
 * After an aborted step: once the gateway has closed (every call answered), the marked sleep is
 * gone and so is every process of its PID namespace `ns` (found by marker and namespace, never by
 * a pattern of the command line, which another checkout's run of the same test on this host
 * matches too), its later effect never happened, and its record is IN_DOUBT.
 */
export async function expectKilled(w: World, tree: MarkedTree, ns: string, call_id: string): Promise<void> {
  await w.gateway.close();
  await tree.expectGone(ns);
  expect(w.effects()).toBe(0);
  expect(w.audit.records.find((r) => r.call_id === call_id)).toMatchObject({ record_state: "IN_DOUBT" });
}

/** After one A3 delete approved and one denied by `approver`: only the approved one ran, each decided once. */
export async function expectOneApprovedOneDenied(w: World, approver: string): Promise<void> {
  expect(w.deletes).toEqual(["old-a.txt"]);
  expect([w.exists("old-a.txt"), w.exists("old-b.txt")]).toEqual([false, true]);
  const decided = (await w.gateway.approvals.list()).map((a) => [
    (a.arguments as { name: string }).name,
    a.state,
    a.approver,
  ]);
  expect(decided.sort()).toEqual([
    ["old-a.txt", "consumed", `cli:${approver}`],
    ["old-b.txt", "denied", `cli:${approver}`],
  ]);
}
