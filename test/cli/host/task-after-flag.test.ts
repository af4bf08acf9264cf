/** `--task-after-ms` of serve and proxy: parsed to the task runner's window, bad values refused with one clear line. */
import { describe, expect, it } from "vitest";
import { MAX_TASK_AFTER_MS, parseGatewayFlags, parseTaskAfter } from "../../../src/cli/host/flags.js";
import { createTaskRunner } from "../../../src/runtime/tasks.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { cli } from "../../support/cli.js";

const refusal = (text: string) =>
  `--task-after-ms must be a whole number of milliseconds from 0 to ${MAX_TASK_AFTER_MS} (how long a call may answer in its request before it becomes a task); received ${JSON.stringify(text)}; example --task-after-ms 1000`;

describe("--task-after-ms", () => {
  it("absent gives the runner's default; 0 up to the cap is passed on", () => {
    expect(parseGatewayFlags({}).tasks).toEqual({});
    expect(parseGatewayFlags({ taskAfterMs: "0" }).tasks).toEqual({ task_after_ms: 0 });
    expect(parseGatewayFlags({ taskAfterMs: " 2500 ", maxTasksPerOwner: "3" }).tasks).toEqual({
      task_after_ms: 2500,
      max_live_per_owner: 3,
    });
    expect(parseTaskAfter(String(MAX_TASK_AFTER_MS))).toBe(MAX_TASK_AFTER_MS);
  });

  it.each(["-1", "1.5", "1s", "", "1e3", String(MAX_TASK_AFTER_MS + 1)])(
    "refuses %j naming the flag, the range and an example",
    (text) => {
      expect(() => parseTaskAfter(text)).toThrow(refusal(text));
    },
  );

  it("serve and proxy refuse a bad value before anything starts", async () => {
    const runs = [
      await cli("serve", "--task-after-ms", "soon"),
      await cli("proxy", "--task-after-ms", "-5", "--", "node", "-e", "0"),
    ];
    expect(runs.map((r) => [r.code, r.out, r.err])).toEqual([
      [2, "", `toolgate: ${refusal("soon")} [bad_flag]\n`],
      [2, "", `toolgate: ${refusal("-5")} [bad_flag]\n`],
    ]);
  });

  it("createTaskRunner refuses a task_after_ms that is no whole number of ms, naming the option", async () => {
    const store = await openStore("memory:");
    const gateway = createGateway({ tools: [], store, audit: false });
    for (const bad of [-1, 1.5, Number.NaN])
      expect(() => createTaskRunner(gateway, { store, task_after_ms: bad })).toThrow(
        `task_after_ms must be a whole number of milliseconds, 0 or more (how long a call may answer in its request before it becomes a task), e.g. 1000; received ${String(bad)}`,
      );
    await gateway.close({ grace_ms: 0 });
  });
});
