/**
 * A tool whose calls the test finishes: each call waits until the test releases it by name
 * (`whenHeld(name)` returns the release once the call is waiting); with `stopsOnAbort` a call
 * whose signal aborts stops instead. Shared by the task race, sweep and bound suites.
 */
import { z } from "zod";
import type { ToolSpec } from "../../src/core/tool.js";
import type { TaskRecord } from "../../src/idempotency/tasks.js";
import { defineTool } from "../../src/schema/define.js";

/** Releases of the calls waiting now, by name. */
const waiting = new Map<string, () => void>();
/** The names of the calls that started, in order. */
export const heldRuns: string[] = [];

export function heldTool(options: { name?: string; effect?: "read" | "write"; stopsOnAbort?: boolean } = {}): ToolSpec {
  return defineTool({
    name: options.name ?? "held",
    description: "Answers when the test releases it; for task races and bounds.",
    input: z.object({ name: z.string().max(40).describe("Which call.") }).strict(),
    output: z.object({ name: z.string() }).strict(),
    effect: options.effect ?? "read",
    runsAsTask: true,
    handler: async (args, ctx) => {
      heldRuns.push(args.name);
      await new Promise<void>((release, stop) => {
        waiting.set(args.name, release);
        if (options.stopsOnAbort)
          ctx.signal.addEventListener("abort", () => stop(new Error(`${args.name} stopped`)), { once: true });
      });
      return { name: args.name };
    },
  });
}

/** The release of the call `name`, once it waits. */
export async function whenHeld(name: string): Promise<() => void> {
  while (!waiting.has(name)) await new Promise((r) => setTimeout(r, 5));
  return waiting.get(name)!;
}

/** A live task of `held`'s, as a process left it: last written at `written_at`, kept until `expires_at`. */
export function liveTask(id: string, written_at: number, expires_at: number): TaskRecord {
  return {
    id,
    tool: "held",
    owner: "alice",
    status: "working",
    status_message: null,
    result: null,
    created_at: written_at,
    updated_at: written_at,
    ttl_ms: expires_at - written_at,
    expires_at,
    poll_ms: 20,
  };
}
