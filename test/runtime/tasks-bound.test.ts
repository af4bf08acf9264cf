/**
 * `run` at the per-owner bound: a read starts in its request, holding no place; one that ends
 * within task_after_ms is answered, one that would have to go on as a task is stopped (safe to
 * repeat) and refused; a write, and any call with task_after_ms 0, is refused before it starts
 * (stopped midway a write would be left in doubt). On SQLite.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ToolgateError } from "../../src/core/errors.js";
import { createSqliteStore } from "../../src/idempotency/stores/sqlite.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { ownerBound } from "../../src/runtime/task-owners.js";
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

const fix =
  "wait for one to end (tasks/get), cancel one (tasks/cancel), then call again (the operator can raise max_live_per_owner: toolgate's --max-tasks-per-owner)";

describe("run at the per-owner bound", { timeout: 30_000 }, () => {
  it("answers a read that ends in time, stops and refuses one that would become a task; refuses a write before it starts", async () => {
    const r = await runner(50);
    const first = await r.tasks.run(proposal("first"), { owner: "alice", task_after_ms: 0 });
    expect("task" in first).toBe(true);
    // A read released before task_after_ms ends is answered, though alice is at her bound.
    const quick = r.tasks.run(proposal("quick"), { owner: "alice", task_after_ms: 600_000 });
    (await whenHeld("quick"))();
    expect(await quick).toMatchObject({ answer: { ok: true, output: { name: "quick" } } });

    // A write is not started: stopped past task_after_ms it would be left in doubt.
    const write = await r.tasks.run(proposal("write", "held_write"), { owner: "alice", task_after_ms: 600_000 }).then(
      () => null,
      (err: unknown) => err as ToolgateError,
    );
    expect(write).toBeInstanceOf(ToolgateError);
    expect(write!.code).toBe("invalid_task");
    expect(write!.message).toBe(
      `alice already has 1 tasks running, the most one caller may (max_live_per_owner 1); nothing was started: ${fix}`,
    );

    // A read still running after task_after_ms is stopped (safe to repeat) and refused.
    await expect(r.tasks.run(proposal("slow"), { owner: "alice" })).rejects.toThrow(
      `alice had 1 tasks running, the most one caller may (max_live_per_owner 1), when this call did not end within task_after_ms (50 ms), so it would have had to go on as one, and was stopped (it only reads or is idempotent, so calling again is safe): ${fix}`,
    );

    // task_after_ms 0: nothing starts.
    await expect(r.tasks.run(proposal("at-once"), { owner: "alice", task_after_ms: 0 })).rejects.toThrow(
      `alice already has 1 tasks running, the most one caller may (max_live_per_owner 1); nothing was started: ${fix}`,
    );
    expect(heldRuns, "the write and the task at once never ran").toEqual(["first", "quick", "slow"]);

    // Below the bound a write runs and goes on as a task as any call.
    const other = await r.tasks.run(proposal("other", "held_write"), { owner: "bob" });
    expect("task" in other).toBe(true);
    (await whenHeld("first"))();
    (await whenHeld("other"))();
    await r.close();
  });

  it("counts the owner's tasks at the decision: a task that ends before the refusal is thrown does not make it say 0", () => {
    const bound = ownerBound(1);
    const release = bound.take("alice", false);
    const refuse = bound.stopped("alice");
    release();
    expect(bound.refusal("alice", false).message).toMatch(/^alice already has 0 tasks running/);
    expect(refuse("this call did not end in time").message).toBe(
      `alice had 1 tasks running, the most one caller may (max_live_per_owner 1), when this call did not end in time: ${fix}`,
    );
  });
});
