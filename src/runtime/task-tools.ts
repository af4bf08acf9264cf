/**
 * Which tools may run as tasks, as the task runner and the MCP listing read it: those that say so
 * (`runsAsTask`, bash_execute) and A3 ones (their approval wait).
 */
import { AUTHORITY } from "../core/tool.js";
import { ToolgateError } from "../core/errors.js";
import type { Gateway, Proposal } from "./types.js";

/** The tools `gateway` lets run as tasks: those that say so, and A3 ones (their approval wait). */
export const mayRunAsTask = (tool: { effect: string; runsAsTask?: boolean | "required" }): boolean =>
  tool.runsAsTask === true ||
  tool.runsAsTask === "required" ||
  AUTHORITY[tool.effect as keyof typeof AUTHORITY] === "A3";

/**
 * Whether a proposal only reads or is idempotent (A0/A1: no idempotency record, so a call stopped
 * midway is safe to repeat), as the gateway settles it; false for a write (A2/A3) and for a tool
 * the gateway does not have.
 */
export function repeatable(gateway: Gateway, proposal: Proposal): boolean {
  const tool = gateway.tools.get(String(proposal.tool));
  if (tool === undefined) return false;
  const authority = AUTHORITY[tool.effect as keyof typeof AUTHORITY];
  return authority === "A0" || authority === "A1";
}

/**
 * How a tool takes tasks, as MCP's `execution.taskSupport` names it: "required" (only as a task,
 * `runsAsTask: "required"`), "optional" (as a task or not), or null (never: "forbidden").
 */
export function taskSupport(tool: {
  effect: string;
  runsAsTask?: boolean | "required";
}): "required" | "optional" | null {
  if (tool.runsAsTask === "required") return "required";
  return mayRunAsTask(tool) ? "optional" : null;
}

/** Refuses (`invalid_task`) a proposal of a tool the gateway has that may not run as a task, naming those that may. */
export function refuseUnlessTaskTool(gateway: Gateway, proposal: Proposal): void {
  const tool = gateway.tools.get(String(proposal.tool));
  if (tool && !mayRunAsTask(tool)) {
    const allowed = [...gateway.tools.values()].filter(mayRunAsTask).map((t) => t.name);
    throw new ToolgateError(
      "invalid_task",
      `${tool.name} cannot run as a task: only tools that may run long or wait for an approval can (${allowed.join(", ") || "none in this catalog"}); call it without a task`,
    );
  }
}
