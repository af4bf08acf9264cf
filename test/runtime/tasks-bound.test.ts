/**
 * `run` at the per-owner bound: the call starts in its request, holding no place; one that ends
 * within task_after_ms is answered, one that would have to go on as a task is stopped and refused,
 * the refusal saying what it left (a started write: in doubt, its key named); with task_after_ms 0
 * nothing starts. On SQLite.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ToolgateError } from "../../src/core/errors.js";
import { createSqliteStore } from "../../src/idempotency/stores/sqlite.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { createTaskRunner } from "../../src/runtime/tasks.js";
import type { Proposal } from "../../src/runtime/types.js";
import { heldRuns, heldTool, whenHeld } from "./held.js";

const dir = mkdtempSync(join(tmpdir(), "tg-bound-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
const proposal = (name: string, which = "held_read"): Proposal => ({
  trajectory_id: "t-bound",
  turn: 1,
  call_id: `bound-${++n}`,
  tool: which,
  arguments: { name },
});

async function runner(task_after_ms: number) {
  const store = await createSqliteStore({ path: join(dir, `${++n}.db`) });
  const gateway = createGateway({
    tools: [
      heldTool({ name: "held_read", stopsOnAbort: true }),
      heldTool({ name: "held_write", effect: "write", stopsOnAbort: true }),
    ],
    store,
    audit: false,
  });
  const tasks = createTaskRunner(gateway, { store, poll_ms: 20, max_live_per_owner: 1, task_after_ms });
  return {
    tasks,
    store,
    async close() {
      tasks.close();
      await gateway.close({ grace_ms: 0 });
    },
  };
}

describe("run at the per-owner bound", { timeout: 30_000 }, () => {
  it("answers a call that ends in time; refuses one that would become a task, naming what it left", async () => {
    const r = await runner(50);
    const first = await r.tasks.run(proposal("first"), { owner: "alice", task_after_ms: 0 });
    expect("task" in first).toBe(true);
    // A call released before task_after_ms ends is answered, though alice is at her bound.
    const quick = r.tasks.run(proposal("quick"), { owner: "alice", task_after_ms: 600_000 });
    (await whenHeld("quick"))();
    expect(await quick).toMatchObject({ answer: { ok: true, output: { name: "quick" } } });

    const write = await r.tasks.run(proposal("write", "held_write"), { owner: "alice" }).then(
      () => null,
      (err: unknown) => err as ToolgateError,
    );
    expect(write).toBeInstanceOf(ToolgateError);
    expect(write!.code).toBe("invalid_task");
    expect(write!.message.replace(/key [0-9a-f]{64}|key \S+\)/, "key <k>")).toBe(
      "alice already has 1 tasks running, the most one caller may (max_live_per_owner 1); this call did not end within task_after_ms (50 ms), so it would have had to go on as one, and was stopped after it had started, so it may have done part of its work: its record is in doubt (key <k>) and repeating it is refused until it is settled (toolgate records): wait for one to end (tasks/get), cancel one (tasks/cancel), then call again",
    );

    // task_after_ms 0: nothing starts.
    await expect(r.tasks.run(proposal("at-once"), { owner: "alice", task_after_ms: 0 })).rejects.toThrow(
      "alice already has 1 tasks running, the most one caller may (max_live_per_owner 1); nothing was started: wait for one to end (tasks/get), cancel one (tasks/cancel), then call again",
    );
    expect(heldRuns).toEqual(["first", "quick", "write"]);
    // Another owner is not held back.
    const other = await r.tasks.run(proposal("other"), { owner: "bob", task_after_ms: 0 });
    expect("task" in other).toBe(true);
    (await whenHeld("first"))();
    (await whenHeld("other"))();
    await r.close();
  });
});
