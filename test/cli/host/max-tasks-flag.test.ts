/** `--max-tasks-per-owner` of serve and proxy: parsed to the task runner's bound, bad values refused with one clear line. */
import { describe, expect, it } from "vitest";
import { MAX_TASKS_PER_OWNER, parseGatewayFlags, parseMaxTasksPerOwner } from "../../../src/cli/host/flags.js";
import { cli } from "../../support/cli.js";

describe("--max-tasks-per-owner", () => {
  it("absent gives the runner's default; a whole number from 1 to the cap is passed on", () => {
    expect(parseGatewayFlags({}).tasks).toEqual({});
    expect(parseGatewayFlags({ maxTasksPerOwner: " 7 " }).tasks).toEqual({ max_live_per_owner: 7 });
    expect(parseMaxTasksPerOwner(String(MAX_TASKS_PER_OWNER))).toBe(MAX_TASKS_PER_OWNER);
  });

  it.each(["0", "-1", "1.5", "abc", "", "1e3", String(MAX_TASKS_PER_OWNER + 1), "99999999999999999999"])(
    "refuses %j naming the flag, the range and an example",
    (text) => {
      expect(() => parseMaxTasksPerOwner(text)).toThrow(
        `--max-tasks-per-owner must be a whole number from 1 to ${MAX_TASKS_PER_OWNER}; received ${JSON.stringify(text)}; example --max-tasks-per-owner 128`,
      );
    },
  );

  it("serve and proxy refuse a bad value before anything starts", async () => {
    const runs = [
      await cli("serve", "--max-tasks-per-owner", "0"),
      await cli("proxy", "--max-tasks-per-owner", "many", "--", "node", "-e", "0"),
    ];
    expect(runs.map((r) => [r.code, r.out, r.err])).toEqual([
      [
        2,
        "",
        `toolgate: --max-tasks-per-owner must be a whole number from 1 to ${MAX_TASKS_PER_OWNER}; received "0"; example --max-tasks-per-owner 128 [bad_flag]\n`,
      ],
      [
        2,
        "",
        `toolgate: --max-tasks-per-owner must be a whole number from 1 to ${MAX_TASKS_PER_OWNER}; received "many"; example --max-tasks-per-owner 128 [bad_flag]\n`,
      ],
    ]);
  });
});
