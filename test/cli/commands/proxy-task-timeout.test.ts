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

  it("beside --config it is the default of the servers that set none: a bad value is refused before the file is read", async () => {
    const bad = await cli("proxy", "--config", "/nonexistent.json", "--task-timeout-ms", "99");
    expect([bad.code, bad.err]).toEqual([2, `toolgate: ${refusal("99")}\n`]);
    // A good one passes on to the file, which is read next.
    const good = await cli("proxy", "--config", "/nonexistent.json", "--task-timeout-ms", "5000");
    expect(good.code).not.toBe(0);
    expect(good.err).not.toContain("--task-timeout-ms");
    expect(good.err).toContain("/nonexistent.json");
  });
});
