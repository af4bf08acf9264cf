/**
 * TG006 side effect — docs/schemas.md and docs/authority.md: the schema also
 * carries the side-effect annotation that tells the runtime how to treat the call (read-only,
 * idempotent, write or destructive), which fixes its authority level, A0 to A3.
 */
import { EFFECTS, type ToolRule } from "../finding.js";

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint"] as const;

export const sideEffect: ToolRule = (tool, ctx) => {
  if (tool.effect !== undefined) {
    if (!EFFECTS.includes(tool.effect as never)) {
      ctx.report({
        rule: "TG006",
        severity: "error",
        pointer: "/effect",
        message: `effect must be one of ${EFFECTS.join(", ")}; found ${JSON.stringify(tool.effect)}`,
        fix: "use read (A0), idempotent (A1), write (A2) or destructive (A3)",
      });
    }
    return;
  }
  const a = tool.annotations;
  if (a && HINTS.some((h) => typeof a[h] === "boolean")) return;
  ctx.report({
    rule: "TG006",
    severity: "error",
    pointer: a ? "/annotations" : "",
    message: "the tool does not declare its side effect, so the runtime must treat every call as destructive (A3)",
    fix: 'add annotations {"readOnlyHint": true} for a read-only tool, {"idempotentHint": true} for a repeatable write, {"destructiveHint": true} for an irreversible one (toolgate: effect: read | idempotent | write | destructive)',
  });
};

/** True when the tool is declared read-only (TG008 skips those). */
export function declaredReadOnly(effect: unknown, annotations: { readOnlyHint?: boolean } | undefined): boolean {
  return effect === "read" || annotations?.readOnlyHint === true;
}
