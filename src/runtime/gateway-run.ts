/**
 * The gateway's helpers around a tool's run: an A0/A1 execution whose failure is a refusal
 * (`executeSafe`, synchronous when the handler is), a tool's per-call time bound (`narrowBound`),
 * and an A3 settle queued behind the one of its key still running in this process (`inTurn`,
 * waiting at most the lease).
 */
import type { ToolContext, ToolSpec } from "../core/tool.js";
import type { JsonValue } from "../core/json.js";
import { isThenable, type Refusal } from "./call.js";
import { executeNow, type CallAbort, type Executed } from "./execute.js";
import { thrownRefusal } from "./failures.js";

/**
 * An A0/A1 execution whose throw or rejection is the refusal that says so (nothing to settle):
 * synchronous when the handler is.
 */
export function executeSafe(
  tool: ToolSpec,
  args: JsonValue,
  ctx: ToolContext,
  abort: CallAbort,
): Executed | Refusal | Promise<Executed | Refusal> {
  const refused = (err: unknown) => thrownRefusal(tool, err, { effect: "safe" });
  try {
    const ran = executeNow(tool, args, ctx, abort);
    return isThenable(ran) ? ran.catch(refused) : ran;
  } catch (err) {
    return refused(err);
  }
}

/** Resolves when `p` settles or after `ms`, whichever is first. */
function waitAtMost(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms).unref()))]).finally(() =>
    clearTimeout(timer),
  );
}

/** Applies a tool's per-call bound; a `timeoutFor` that throws or answers nonsense leaves the tool's own bound. */
export function narrowBound(abort: CallAbort, tool: ToolSpec, args: JsonValue): void {
  try {
    const ms = tool.timeoutFor!(args as Record<string, unknown>);
    if (typeof ms === "number") abort.narrow(ms);
  } catch {
    // The tool's own timeout_ms still bounds the call.
  }
}

/**
 * Runs `work` after the settle of the same `key` still running in this process (waiting at most
 * `ms`: then settle meets it in flight and says so). Only A3 settles take turns (`gateway-write.ts`).
 */
export async function inTurn<T>(
  settling: Map<string, Promise<void>>,
  key: string,
  ms: number,
  work: () => Promise<T>,
): Promise<T> {
  const ahead = settling.get(key);
  const mine = (ahead ? waitAtMost(ahead, ms) : Promise.resolve()).then(work);
  const done = mine.then(
    () => {},
    () => {},
  );
  settling.set(key, done);
  try {
    return await mine;
  } finally {
    if (settling.get(key) === done) settling.delete(key);
  }
}
