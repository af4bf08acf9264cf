/** `toolgate proxy --task-timeout-ms`: a bad value refused with one clear line before anything starts. */
import { describe, expect, it } from "vitest";
import { cli } from "../../support/cli.js";

const refusal = (text: string) =>
  `--task-timeout-ms must be a whole number of milliseconds of at least 100, e.g. --task-timeout-ms 7200000; received ${JSON.stringify(text)}`;

describe("proxy --task-timeout-ms", () => {
  it.each(["soon", "-5", "1.5", "99"])("refuses %j naming the flag, the floor and an example", async (text) => {
    const r = await cli("proxy", "--task-timeout-ms", text, "--", "node", "-e", "0");
    expect([r.code, r.out, r.err]).toEqual([2, "", `toolgate: ${refusal(text)}\n`]);
  });

  it("refuses a value past the longest timer Node keeps", async () => {
    const r = await cli("proxy", "--task-timeout-ms", "2147483648", "--", "node", "-e", "0");
    expect([r.code, r.err]).toEqual([
      2,
      'toolgate: --task-timeout-ms must be at most 2147483647 (about 24 days, the longest timer Node keeps), e.g. --task-timeout-ms 7200000; received "2147483648"\n',
    ]);
  });

  it("refuses it beside --config, saying where a task's limit comes from there", async () => {
    const r = await cli("proxy", "--config", "/nonexistent.json", "--task-timeout-ms", "5000");
    expect(r.code).toBe(2);
    expect(r.err).toContain("with --config, a call an upstream runs as a task is bounded by its tool's time limit");
  });
});
