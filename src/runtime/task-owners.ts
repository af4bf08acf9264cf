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
  /**
   * The refusal of one more task for `owner` at the bound, as `take` throws it; `left` says what
   * became of the call (default: nothing was started), `note` adds a sentence.
   */
  refusal(owner: string, asked: boolean, left?: string, note?: string): ToolgateError;
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
  function refusal(owner: string, asked: boolean, left = "nothing was started", note?: string): ToolgateError {
    const live = liveByOwner.get(owner) ?? 0;
    return new ToolgateError(
      "invalid_task",
      `${owner.slice(0, 100)} already has ${live} tasks running, the most one caller may (max_live_per_owner ${max}); ${left}: wait for one to end (tasks/get), cancel one (tasks/cancel)${asked ? ", or call without a task" : ", then call again"}${note ? `. ${note}` : ""}`,
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
  };
}
