/**
 * What makes two approvals requests for the same call (store.ts `createOrReuse`): the tool, the
 * canonical-argument hash, the capability id and the trajectory. Shared by the stores that keep
 * their own index of it (memory, Redis) or lock on it (PostgreSQL).
 */
import type { ApprovalRecord } from "../store.js";

/** One string per (tool, args_hash, capability_id, trajectory_id); injective (a JSON array). */
export function approvalBinding(
  r: Pick<ApprovalRecord, "tool" | "args_hash" | "capability_id" | "trajectory_id">,
): string {
  return JSON.stringify([r.tool, r.args_hash, r.capability_id, r.trajectory_id]);
}

/**
 * Reused by `createOrReuse` at `now`: not denied (pending, approved or consumed) and not expired
 * (an approval expires at `expires_at`). The SQL and Lua of the other stores repeat this test.
 */
export function isLiveAt(r: Pick<ApprovalRecord, "state" | "expires_at">, now: number): boolean {
  return r.state !== "denied" && now < r.expires_at;
}
