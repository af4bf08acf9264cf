/**
 * What a tools/call answers besides a plain observation: an unknown tool's -32602, the hint where
 * a capability goes over MCP, a malformed `_meta`'s refusal, and the result checked against the
 * tool's outputSchema.
 */
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type Server } from "@modelcontextprotocol/server";
import type { Observation } from "../../core/observation.js";
import { escapeUntrusted } from "../../observation/escape.js";
import type { Gateway } from "../../runtime/types.js";
import { META_KEYS, type MetaIssue } from "./meta.js";
import { outputCheck } from "./output-check.js";
import { OBSERVATION_META, outputMismatchResult, toCallToolResult } from "./result.js";

/**
 * An unknown tool is a protocol error (-32602) in both revisions; its message is the gateway's
 * observation text, which names the tools that come closest, since clients show it to the model.
 */
export function unknownTool(obs: Observation): Error {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, obs.text, { tool: obs.tool, code: "unknown_tool" });
}

/**
 * The runtime's denial for a missing capability says "send it with the call"; over MCP the model
 * (and the person configuring the client) needs to know where: `_meta`, or over HTTP the header.
 */
export function withCapabilityHint(obs: Observation, http: boolean): Observation {
  if (obs.error?.detail?.code !== "missing_capability") return obs;
  const where = `_meta["${META_KEYS.capability}"] of tools/call${http ? " or an Authorization: Bearer header" : ""}`;
  return { ...obs, text: `${obs.text}\nOver MCP, send the token in ${where}.` };
}

/**
 * A malformed `_meta` is the MCP client's doing (its code or its configuration), not the model's:
 * the text says so, so the model reports it instead of retrying with other arguments.
 */
export function metaRefusal(name: string, issue: MetaIssue): CallToolResult {
  const tool = escapeUntrusted(name);
  return {
    isError: true,
    content: [
      {
        type: "text",
        text: `${tool} was not run: the MCP client sent request metadata toolgate cannot use. ${issue.message}. The request's _meta is set by the client, not by the tool's arguments, so calling again will not help: this is for the client's author (or whoever configures it) to fix.`,
      },
    ],
    _meta: {
      [OBSERVATION_META]: {
        ok: false,
        tool,
        call_id: "",
        error: { code: "invalid_meta", message: issue.message, detail: { field: issue.field } },
      },
    },
  };
}

/** The tools/call result of `server`'s calls; an output that breaks the tool's own outputSchema is an isError result. */
export function callResults(server: Server, gateway: Gateway): (name: string, obs: Observation) => CallToolResult {
  const checkOutput = outputCheck();
  return function callResult(name, obs) {
    const outputSchema = gateway.tools.get(name)?.outputSchema;
    if (outputSchema === undefined) return toCallToolResult(obs, false);
    const problems = obs.ok ? checkOutput(name, outputSchema, obs.output) : null;
    return problems
      ? outputMismatchResult(obs, problems)
      : server.projectCallToolResult(
          toCallToolResult(obs, true, (cut) => checkOutput(name, outputSchema, cut) === null),
          outputSchema,
        );
  };
}
