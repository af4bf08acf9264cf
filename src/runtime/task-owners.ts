/**
 * The per-owner bound on tasks running in one process: each holds a call and a poll, and a task
 * answers its request at once, so without it one client could start calls without end past any
 * per-request bound. A call answered in its own request holds no place: the request bounds it.
 */
import { ToolgateError } from "../core/errors.js";

export interface OwnerBound {
  /**
   * Counts one more live task of `owner` and returns its release (idempotent); refuses
   * (`invalid_task`) an owner that names nobody, and one already at the bound. `asked`: the caller
   * chose a task (2025-11-25), so "call without a task" is advice it can follow.
   */
  take(owner: string, asked: boolean): () => void;
  /** As `take`, but null instead of the refusal when `owner` is at the bound. */
  tryTake(owner: string): (() => void) | null;
  /** The refusal of one more task for `owner` at the bound, as `take` throws it: nothing was started. */
  refusal(owner: string, asked: boolean): ToolgateError;
  /**
   * For a `run` call found at the bound after it started (the server would have made it a task):
   * the refusal of it once stopped, `left` saying what became of it. The count is read now, at the
   * decision, and told in the past, so it stays true however long the call takes to stop.
   */
  stopped(owner: string): (left: string) => ToolgateError;
}

export function ownerBound(max: number): OwnerBound {
  /** Tasks running here, by owner (an owner's entry goes when its last task ends). */
  const liveByOwner = new Map<string, number>();
  function tryTake(owner: string): (() => void) | null {
    if (typeof owner !== "string" || owner === "")
      throw new ToolgateError(
        "invalid_task",
        `owner must be a non-empty string naming the caller (a bearer's holder, a peer address); received ${JSON.stringify(owner)}; pass the principal the transport authenticated`,
      );
    const live = liveByOwner.get(owner) ?? 0;
    if (live >= max) return null;
    // Counted before the store is awaited, so a burst of starts cannot all pass the check at once.
    liveByOwner.set(owner, live + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (liveByOwner.get(owner) ?? 1) - 1;
      if (left <= 0) liveByOwner.delete(owner);
      else liveByOwner.set(owner, left);
    };
  }
  const fix = (asked: boolean) =>
    `wait for one to end (tasks/get), cancel one (tasks/cancel)${asked ? ", or call without a task" : ", then call again"} (the operator can raise max_live_per_owner: toolgate's --max-tasks-per-owner)`;
  function refusal(owner: string, asked: boolean): ToolgateError {
    return new ToolgateError(
      "invalid_task",
      `${owner.slice(0, 100)} already has ${liveByOwner.get(owner) ?? 0} tasks running, the most one caller may (max_live_per_owner ${max}); nothing was started: ${fix(asked)}`,
    );
  }
  function stopped(owner: string): (left: string) => ToolgateError {
    const had = liveByOwner.get(owner) ?? 0;
    return (left) =>
      new ToolgateError(
        "invalid_task",
        `${owner.slice(0, 100)} had ${had} tasks running, the most one caller may (max_live_per_owner ${max}), when ${left}: ${fix(false)}`,
      );
  }
  return {
    take(owner, asked) {
      const release = tryTake(owner);
      if (release === null) throw refusal(owner, asked);
      return release;
    },
    tryTake,
    refusal,
    stopped,
  };
}
