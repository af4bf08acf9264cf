/**
 * A scripted stand-in for a language model in the AI SDK's own loop: the SDK's mock model
 * answering each request with the next step of a script (tool calls under given ids, or text).
 */
import { MockLanguageModelV4 } from "ai/test";

export type Step = { call: [id: string, tool: string, args: unknown][] } | { text: string };
export const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A model that answers each request with the next step of its script, across generateText calls. */
export function scripted(steps: Step[]) {
  const queue = [...steps];
  return new MockLanguageModelV4({
    doGenerate: async () => {
      const step = queue.shift();
      if (!step) throw new Error("the script has no step left");
      if ("text" in step)
        return {
          content: [{ type: "text", text: step.text }],
          finishReason: { unified: "stop", raw: undefined },
          usage,
          warnings: [],
        };
      return {
        content: step.call.map(([toolCallId, toolName, args]) => ({
          type: "tool-call" as const,
          toolCallId,
          toolName,
          input: JSON.stringify(args),
        })),
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}
