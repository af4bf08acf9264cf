/**
 * LangChain.js 1.x: the gateway's tools as `@langchain/core` tools. Called with a tool call (as
 * `createAgent`, LangGraph's ToolNode and `bindTools` loops do), a tool proposes it under the tool
 * call's `id` and answers with a ToolMessage: the observation's bounded text as its content, the
 * whole observation as its artifact, `status: "error"` for a refusal (a tool result the model
 * reads, never an exception that ends the loop). An A3 call pauses the graph with LangGraph's
 * `interrupt()`, carrying the gateway's approval request; resumed with `new Command({ resume: {
 * approved: true } })` (or `{ type: "approve" }` / `{ type: "reject", message }`), the decision
 * is recorded in `gateway.approvals` and the call runs once, or not.
 */
import type { Observation } from "../core/observation.js";
import { AUTHORITY, type ToolSpec } from "../core/tool.js";
import type { Gateway } from "../runtime/types.js";
import { importFramework } from "./peer.js";
import { createAgentRun, type AgentRun, type AgentRunOptions, type CallIds } from "./run.js";

/** What an interrupt carries to the person (and the application that asks them). */
export interface LangChainApprovalRequest {
  tool: string;
  arguments: unknown;
  approval_id: string;
  /** toolgate's text: what the call does and why it waits. */
  text: string;
}
/** A resume value that decides an interrupted A3 call. */
export type LangChainApprovalDecision =
  { approved: boolean; reason?: string } | { type: "approve" } | { type: "reject"; message?: string };

export interface LangChainTools {
  /** Pass as `tools` to `createAgent`, a ToolNode or `model.bindTools`. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  tools: any[];
  run: AgentRun;
}

interface ToolCallLike {
  id?: string;
  name?: string;
  args?: unknown;
  type?: string;
}

/** The LangChain tools of a gateway for one run; `run` may be an existing run (a sub-agent's). */
export async function langChainTools(gateway: Gateway | AgentRun, options?: AgentRunOptions): Promise<LangChainTools> {
  const entry = "toolgate/langchain";
  const { StructuredTool } = await importFramework(
    entry,
    "@langchain/core",
    "^1",
    () => import("@langchain/core/tools"),
  );
  const { ToolMessage } = await importFramework(
    entry,
    "@langchain/core",
    "^1",
    () => import("@langchain/core/messages"),
  );
  const callbacks = await importFramework(
    entry,
    "@langchain/core",
    "^1",
    () => import("@langchain/core/callbacks/manager"),
  );
  const run = "subAgent" in gateway ? gateway : createAgentRun(gateway, options!);
  const needsGraph = run.tools.some((t) => AUTHORITY[t.effect] === "A3");
  const graph = needsGraph
    ? await importFramework(entry, "@langchain/langgraph", "^1", () => import("@langchain/langgraph"))
    : null;

  /** Asks through interrupt() and records the answer; null when there is no graph to pause. */
  async function decide(spec: ToolSpec, args: unknown, at: CallIds, pending: Observation): Promise<boolean | null> {
    const request: LangChainApprovalRequest = {
      tool: spec.name,
      arguments: args,
      approval_id: String(pending.error?.detail?.approval_id),
      text: pending.text,
    };
    let answer: unknown;
    try {
      answer = graph!.interrupt(request);
    } catch (err) {
      if (graph!.isGraphInterrupt(err)) throw err;
      return null;
    }
    const approved = approvedBy(answer);
    if (!approved) await run.deny(spec.name, args, at, rejection(answer));
    return approved;
  }

  class GatewayTool extends StructuredTool {
    name: string;
    description: string;
    schema: Record<string, unknown>;
    constructor(private readonly spec: ToolSpec) {
      super();
      this.name = spec.name;
      this.description = spec.description;
      this.schema = spec.inputSchema as Record<string, unknown>;
    }

    /**
     * toolgate validates the arguments itself, so the call skips LangChain's schema check: an
     * invalid call reaches the model as toolgate's refusal, which says what to change. The
     * callbacks (tracing) see the tool start and end as for any LangChain tool.
     */
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    override async call(arg: any, configArg?: any): Promise<any> {
      const call: ToolCallLike | null = isToolCall(arg) ? arg : null;
      const args = call ? call.args : arg;
      const config = callbacks.parseCallbackConfigArg(configArg) as {
        signal?: AbortSignal;
        runId?: string;
        runName?: string;
        toolCall?: { id?: string };
      } & ReturnType<typeof callbacks.parseCallbackConfigArg>;
      const id = call?.id ?? config.toolCall?.id;
      const manager = callbacks.CallbackManager.configure(
        config.callbacks,
        this.callbacks,
        config.tags,
        this.tags,
        config.metadata,
        this.metadata,
        { verbose: this.verbose },
      );
      const input = typeof args === "object" && args !== null ? (args as Record<string, unknown>) : String(args);
      const run$ = await manager?.handleToolStart(
        this.toJSON(),
        input,
        config.runId,
        undefined,
        undefined,
        undefined,
        config.runName,
        id,
      );
      try {
        const out = await this.propose(args, id, config.signal);
        await run$?.handleToolEnd(out);
        return out;
      } catch (err) {
        await run$?.handleToolError(err);
        throw err;
      }
    }

    private async propose(args: unknown, id: string | undefined, signal: AbortSignal | undefined) {
      const at: CallIds = { call_id: String(id ?? ""), turn: 0, ...(signal ? { signal } : {}) };
      let o = await run.call(this.spec.name, args, at);
      if (o.error?.code === "approval_required" && AUTHORITY[this.spec.effect] === "A3") {
        const approved = await decide(this.spec, args, at, o);
        if (approved === true) o = await run.callApproved(this.spec.name, args, at);
        else if (approved === false)
          return answer(id, `${this.spec.name} was not run: the person denied this call.`, o, this.spec.name);
      }
      return answer(id, o.text, o, this.spec.name);
    }

    protected async _call(): Promise<string> {
      throw new Error("a toolgate tool runs through call(), which proposes it to the gateway");
    }
  }

  function answer(id: string | undefined, text: string, o: Observation, name: string) {
    if (id === undefined) return text;
    return new ToolMessage({ content: text, tool_call_id: id, name, artifact: o, status: o.ok ? "success" : "error" });
  }

  return { tools: run.tools.map((spec) => new GatewayTool(spec)), run };
}

function isToolCall(x: unknown): x is ToolCallLike {
  return typeof x === "object" && x !== null && "args" in x && ((x as ToolCallLike).type === "tool_call" || "id" in x);
}

function approvedBy(answer: unknown): boolean {
  if (typeof answer !== "object" || answer === null) return false;
  const a = answer as { approved?: unknown; type?: unknown };
  return a.approved === true || a.type === "approve";
}

function rejection(answer: unknown): string | undefined {
  if (typeof answer !== "object" || answer === null) return undefined;
  const a = answer as { reason?: unknown; message?: unknown };
  const r = a.reason ?? a.message;
  return typeof r === "string" && r.length > 0 ? r : undefined;
}
