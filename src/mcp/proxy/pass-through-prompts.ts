/**
 * The pass-through's prompts: their list paged from what is served, and a get sent to the
 * upstream that publishes the prompt (under its own name there), its arguments bounded and its
 * messages rebuilt by `prompt-content.ts`. `promptOf` also names a completion's prompt.
 */
import type { GetPromptResult, ListPromptsResult, Prompt } from "@modelcontextprotocol/client";
import { closest } from "../../core/closest.js";
import { boundedLog, boundedText, MAX_DESCRIPTION_CHARS } from "./upstream-bounds.js";
import { rebuiltMessages } from "./prompt-content.js";
import { ask, bounded, invalid, shown, type PublishedPrompt, type Routed } from "./pass-through-ask.js";
import { MAX_ARGUMENTS } from "./pass-through-items.js";
import { page, type Served } from "./pass-through-lists.js";

/** Each argument value's length in a prompts/get (their count is `MAX_ARGUMENTS`). */
const MAX_ARGUMENT_CHARS = 65_536;

/** What a client may ask of the upstreams' prompts (`UpstreamPassThrough.prompts`). */
export interface PassThroughPrompts {
  list(cursor: string | undefined): Promise<ListPromptsResult>;
  get(name: string, args: Record<string, string>, request: Routed): Promise<GetPromptResult>;
}

export function promptOf(served: Served, method: string, field: string, name: string): PublishedPrompt {
  const found = served.prompts.get(name);
  if (found) return found;
  const near = closest(name, [...served.prompts.keys()]);
  throw invalid(
    `${method} ${field} ${shown(name)} is not a prompt this server serves${near ? `; did you mean ${shown(near)}?` : ""}; call prompts/list for the names`,
  );
}

/** The prompts served from `served`; a get's odd messages said on `log`. */
export function passThroughPrompts(served: Served, log: (line: string) => void): PassThroughPrompts {
  return {
    async list(cursor: string | undefined) {
      const p = page("prompts", "prompts/list", served.promptList, cursor);
      return { prompts: p.items as Prompt[], ...(p.nextCursor ? { nextCursor: p.nextCursor } : {}) };
    },
    async get(name: string, args: Record<string, string>, request: Routed) {
      const prompt = promptOf(served, "prompts/get", "params.name", name);
      const entries = Object.entries(args);
      if (entries.length > MAX_ARGUMENTS || entries.some(([, v]) => v.length > MAX_ARGUMENT_CHARS))
        throw invalid(
          `prompts/get params.arguments: at most ${MAX_ARGUMENTS} arguments of at most ${MAX_ARGUMENT_CHARS} characters each; received ${entries.length}`,
        );
      request.routed?.(prompt.source.server);
      const answer = await ask(prompt.source, "prompts/get", { name: prompt.name, arguments: args }, request.signal);
      bounded(prompt.source, "prompts/get", shown(name), answer);
      const description = boundedText(answer.description, MAX_DESCRIPTION_CHARS);
      const notes = boundedLog(log, `toolgate proxy: ${prompt.source.server}: prompts/get ${shown(name)}: `, 5);
      const messages = rebuiltMessages(answer.messages, notes.note) as GetPromptResult["messages"];
      notes.end();
      return { ...(description !== undefined ? { description } : {}), messages };
    },
  };
}
