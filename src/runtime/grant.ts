/**
 * Stage 3, grant: when the gateway holds keys, every call needs a capability that approves its
 * (op, target, cost) (docs/authority.md: checked below the model, on every call,
 * before any host operation). The request comes from the tool's `grant(args)` or, by default,
 * from its effect: read → "read", anything else → "write", on `tool:NAME`, cost 1.
 */
import type { GrantRequest, ToolContext, ToolSpec } from "../core/tool.js";
import type { JsonValue } from "../core/json.js";
import type { CapabilityAuthority } from "../capability/authority.js";
import { refuse, type Refusal } from "./call.js";

/** The default request of a tool that does not say (docs/authority.md). */
export function defaultGrant(tool: ToolSpec): GrantRequest {
  return { op: tool.effect === "read" ? "read" : "write", target: `tool:${tool.name}`, cost: 1 };
}

/** The grant id that approved the call, or a refusal with the denial code and a model-safe reason. */
export async function grant(
  authority: CapabilityAuthority,
  tool: ToolSpec,
  args: JsonValue,
  token: string | undefined,
  ctx: ToolContext,
): Promise<{ grant_id: string; chain_fingerprint: string; holder: string } | Refusal> {
  let request: GrantRequest;
  try {
    request = tool.grant ? await tool.grant(args as Record<string, unknown>, ctx) : defaultGrant(tool);
  } catch (err) {
    return refuse(
      "denied",
      `${tool.name} could not say what authority this call needs, so it was not granted; nothing was executed.`,
      {
        detail: { code: "grant_request_failed" },
        untrusted: (err as Error)?.message ?? String(err),
      },
    );
  }
  const cost = request.cost ?? 1;
  const needs = `${request.op} on ${request.target}${cost !== 1 ? ` at cost ${cost}` : ""}`;
  if (token === undefined) {
    return refuse(
      "denied",
      `This call needs a capability token (tg1.…) granting ${needs}; none was sent with the call. Nothing was executed; ask the operator for a capability that covers it and send it with the call.`,
      { detail: { code: "missing_capability", op: request.op, target: request.target, cost } },
    );
  }
  const decision = await authority.authorize(token, {
    op: request.op,
    target: request.target,
    cost,
    tool: tool.name,
    args,
  });
  if (decision.allowed) {
    const allowed = decision;
    return {
      grant_id: allowed.grant_id,
      // Read only by the A3 approval gate.
      get chain_fingerprint() {
        return allowed.chain_fingerprint;
      },
      // Read only when the call brings its own idempotency key.
      get holder() {
        return allowed.holder;
      },
    };
  }
  return refuse(
    "denied",
    `The capability was refused for ${needs}: ${decision.reason} (${decision.code}). Nothing was executed; do not retry with the same capability.`,
    {
      detail: { code: decision.code, op: request.op, target: request.target, cost },
    },
  );
}
