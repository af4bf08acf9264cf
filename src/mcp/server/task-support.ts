/**
 * The errors of a tools/call that does not match how its tool takes tasks (`execution.taskSupport`).
 * On 2025-11-25 the client chooses, and the tool's listing says what it may choose: a call made as
 * a task of a tool listed without taskSupport (or "forbidden"), or a call of a "required" one made
 * without, is -32601 (Method not found), as that revision's tool-level negotiation prescribes. On
 * 2026-07-28 the server chooses, so the only mismatch is a "required" tool called by a client that
 * did not declare the tasks extension on its request: -32021, naming the extension it lacks.
 */
import { CLIENT_CAPABILITIES_META_KEY, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { escapeUntrusted } from "../../observation/escape.js";
import { TASKS_EXTENSION } from "./tasks-ext.js";

/** A 2025-11-25 tools/call carrying `task` for a tool that never runs as one; `taskTools` are those that may. */
export function taskForbidden(tool: string, taskTools: readonly string[]): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.MethodNotFound,
    `tools/call params.task: ${escapeUntrusted(tool)} cannot run as a task (its tools/list entry has no execution.taskSupport, which means "forbidden"; those that can: ${taskTools.map((t) => escapeUntrusted(t)).join(", ") || "none"}); received a task-augmented call; call it without params.task`,
    { tool, taskSupport: "forbidden" },
  );
}

/** A 2025-11-25 tools/call without `task` for a tool that runs only as one. */
export function taskRequired(tool: string): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.MethodNotFound,
    `tools/call: ${escapeUntrusted(tool)} runs only as a task (its tools/list entry has execution.taskSupport "required"); received a call without params.task; add "task": {"ttl": 600000} to the params and read the answer with tasks/result`,
    { tool, taskSupport: "required" },
  );
}

/** A 2026-07-28 tools/call of a tool that runs only as a task, from a client without the tasks extension. */
export function tasksExtensionRequired(tool: string): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.MissingRequiredClientCapability,
    `tools/call: ${escapeUntrusted(tool)} runs only as a task, and this request's client did not declare the ${TASKS_EXTENSION} extension; add "extensions": {"${TASKS_EXTENSION}": {}} to params._meta["${CLIENT_CAPABILITIES_META_KEY}"] and poll the task it answers with tasks/get`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}
