/**
 * The re-list trigger (`coalesced`): one run at a time, triggers during a run folded into one more,
 * and runs spaced by the gap, so an upstream that answers every re-list with another list_changed
 * costs one re-list a second (the clock and the wait are the test's own: no timer is measured).
 */
import { describe, expect, it } from "vitest";
import { coalesced } from "../../../src/mcp/proxy/list-watch.js";

describe("coalesced re-lists", () => {
  it("an upstream that says its list changed on every re-list is re-listed once per gap, not back to back", async () => {
    let clock = 0;
    const waits: number[] = [];
    const starts: number[] = [];
    let trigger: () => void = () => {};
    let runs = 0;
    let finished: () => void = () => {};
    const done = new Promise<void>((r) => (finished = r));
    trigger = coalesced(
      async () => {
        starts.push(clock);
        runs += 1;
        clock += 10; // the re-list takes 10 ms
        if (runs < 5)
          trigger(); // the hostile upstream: another list_changed with each answer
        else finished();
      },
      {
        gapMs: 1_000,
        now: () => clock,
        sleep: async (ms) => {
          waits.push(ms);
          clock += ms;
        },
      },
    );
    trigger();
    await done;
    expect(runs).toBe(5);
    // The first runs at once; each later one starts a full gap after the one before.
    expect(waits).toEqual([990, 990, 990, 990]);
    expect(starts).toEqual([0, 1_000, 2_000, 3_000, 4_000]);
  });

  it("a storm during one run makes exactly one more run", async () => {
    const clock = 0;
    let runs = 0;
    let release: () => void = () => {};
    const first = new Promise<void>((r) => (release = r));
    const trigger = coalesced(
      async () => {
        runs += 1;
        if (runs === 1) await first;
      },
      { gapMs: 0, now: () => clock, sleep: async () => {} },
    );
    trigger();
    for (let i = 0; i < 1_000; i++) trigger();
    release();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(runs).toBe(2);
  });
});
