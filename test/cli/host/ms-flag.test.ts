/** Millisecond flags: `--grace-ms` and `--session-idle-ms` (serve and proxy), refused with one clear line before
 * anything starts. */
import { describe, expect, it } from "vitest";
import { MIN_SESSION_IDLE_MS, parseMsFlag, parseSessionIdle } from "../../../src/cli/host/ms-flag.js";
import { cli } from "../../support/cli.js";

describe("millisecond flags", () => {
  it("accepts whole milliseconds at or above the floor", () => {
    expect(parseMsFlag("--grace-ms", "0", { min: 0, example: 10_000 })).toBe(0);
    expect(parseSessionIdle(" 1800000 ", true)).toBe(1_800_000);
    expect(parseSessionIdle(String(MIN_SESSION_IDLE_MS), true)).toBe(1000);
    expect(parseSessionIdle(undefined, false)).toBeUndefined();
  });

  it.each(["", "abc", "-5", "1.5", "1e6", "999", "99999999999999999999"])(
    "refuses --session-idle-ms %j, naming the flag, the floor and an example",
    (text) => {
      expect(() => parseSessionIdle(text, true)).toThrow(
        `--session-idle-ms must be a whole number of milliseconds of at least 1000, e.g. --session-idle-ms 1800000; received ${JSON.stringify(text)}`,
      );
    },
  );

  it("serve and proxy refuse a bad --session-idle-ms, or one without --http, with exit 2 and one line", async () => {
    const runs = [
      await cli("serve", "--http", "127.0.0.1:0", "--session-idle-ms", "soon"),
      await cli("proxy", "--http", "127.0.0.1:0", "--session-idle-ms", "10", "--", "node", "-e", "0"),
      await cli("serve", "--session-idle-ms", "60000"),
      await cli("serve", "--http", "127.0.0.1:0", "--grace-ms", "-1"),
    ];
    expect(runs.map((r) => [r.code, r.out, r.err])).toEqual([
      [
        2,
        "",
        'toolgate: --session-idle-ms must be a whole number of milliseconds of at least 1000, e.g. --session-idle-ms 1800000; received "soon"\n',
      ],
      [
        2,
        "",
        'toolgate: --session-idle-ms must be a whole number of milliseconds of at least 1000, e.g. --session-idle-ms 1800000; received "10"\n',
      ],
      [
        2,
        "",
        "toolgate: --session-idle-ms applies to Streamable HTTP sessions: add --http HOST:PORT, or drop it (over stdio the session ends with the client)\n",
      ],
      [2, "", 'toolgate: --grace-ms must be a whole number of milliseconds, e.g. --grace-ms 10000; received "-1"\n'],
    ]);
  });
});
