/**
 * A call's idempotency key (docs/idempotency.md): the client's, checked and scoped to the tool
 * and its holder, or derived from the trajectory, with the fingerprint of its arguments.
 */
import type { ToolSpec } from "../core/tool.js";
import type { JsonValue } from "../core/json.js";
import { clientRecordKey, deriveKeyAndFingerprint, fingerprint } from "../canonical/key.js";
import { refuse, type Refusal } from "./call.js";
import type { Proposal } from "./types.js";

/**
 * The call's idempotency key: the client's (checked, and scoped to the tool and `holder`) or derived
 * from the trajectory (docs/idempotency.md).
 */
export function idempotency(
  keySecret: string | Uint8Array | undefined,
  tool: ToolSpec,
  args: JsonValue,
  p: Proposal,
  holder: string | null,
): { key: string; fingerprint: string } | Refusal {
  const secret = keySecret ? { secret: keySecret } : {};
  let key: string;
  try {
    // A derived key: one canonical text of the arguments for both the key and the fingerprint.
    if (p.idempotency_key === undefined)
      return deriveKeyAndFingerprint(
        { trajectory_id: p.trajectory_id, turn: p.turn, call_id: p.call_id, tool: tool.name, args },
        secret,
      );
    key = clientRecordKey({ tool: tool.name, holder, key: p.idempotency_key }, secret);
  } catch (err) {
    return refuse(
      "invalid_proposal",
      `${(err as Error).message}. Fix the call envelope and send it again; nothing was executed.`,
    );
  }
  return { key, fingerprint: fingerprint(args) };
}
