import { afterEach, describe, expect, it, vi } from "vitest";
import { InFlight } from "../../src/core/in-flight.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("InFlight", () => {
  it("is idle at once when nothing is in flight", async () => {
    expect(await new InFlight<number>().idle(0)).toBe(true);
  });

  it("wakes every waiter when the last item ends, not before", async () => {
    const work = new InFlight<string>();
    work.add("a");
    work.add("b");
    expect([...work]).toEqual(["a", "b"]);
    const woken: boolean[] = [];
    const waits = [work.idle(60_000).then((d) => woken.push(d)), work.idle(60_000).then((d) => woken.push(d))];
    work.delete("a");
    await Promise.resolve();
    expect(woken).toEqual([]);
    expect(work.size).toBe(1);
    work.delete("b");
    await Promise.all(waits);
    expect(woken).toEqual([true, true]);
    expect(work.size).toBe(0);
  });

  it("answers false when the time passes first, and a later end wakes no stale waiter", async () => {
    vi.useFakeTimers();
    const work = new InFlight<object>();
    const call = {};
    work.add(call);
    const waited = work.idle(1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await waited).toBe(false);
    const again = work.idle(1_000);
    work.delete(call);
    expect(await again).toBe(true);
  });
});
