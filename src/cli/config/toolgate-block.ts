/**
 * The `toolgate` block of one server entry: what the clients' formats have no words for
 * (namespace, which tools, their effect, budgets, the envelope, rate limits, concurrency).
 */
import { describe } from "../../core/describe.js";
import { isPlainObject } from "../../core/json.js";
import { join } from "../../core/pointer.js";
import type { Effect } from "../../core/tool.js";
import type { Problems } from "./problems.js";
import { filterPatternProblem } from "../../mcp/proxy/aggregate-catalog.js";
import type { ListPatterns, RateLimitConfig, ServerConfig, ToolOverride } from "./types.js";

const EFFECTS: readonly Effect[] = ["read", "idempotent", "write", "destructive"];

const BLOCK_KEYS = [
  "namespace",
  "include",
  "exclude",
  "include_prompts",
  "exclude_prompts",
  "include_resources",
  "exclude_resources",
  "effect",
  "tools",
  "budget_tokens",
  "timeout_ms",
  "task_timeout_ms",
  "sandbox",
  "concurrency",
  "rate_limit",
  "tool_rate_limit",
  "grant_rate_limit",
] as const;

const TOOL_KEYS = ["effect", "rate_limit", "timeout_ms", "task_timeout_ms", "budget_tokens"] as const;
const RATE_KEYS = ["calls", "window_ms"] as const;

/** A namespace becomes part of every tool name, so it keeps to the characters tool names may hold. */
const NAMESPACE = /^[A-Za-z0-9_-]{0,48}$/;
/** An include/exclude entry: a tool name, with `*` standing for any run of characters. */
const PATTERN = /^[A-Za-z0-9_.*-]{1,128}$/;

const DAY_MS = 86_400_000;
/** The longest timer Node keeps, ms (about 24.8 days): the most a task's bound may be. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A task's bound, as `--task-timeout-ms` takes it for a single upstream (100 ms to the longest timer). */
const taskTimeout = (obj: Record<string, unknown>, pointer: string, problems: Problems) =>
  problems.whole(obj, "task_timeout_ms", pointer, 100, MAX_TIMER_MS, 7_200_000);

export type ToolgateBlock = Omit<ServerConfig, "name" | "transport">;

export function readToolgateBlock(
  block: Record<string, unknown> | undefined,
  serverName: string,
  pointer: string,
  problems: Problems,
): ToolgateBlock {
  const out: ToolgateBlock = { namespace: serverName, exclude: [], tools: {}, sandbox: false, rate_limits: {} };
  if (block === undefined) return out;
  problems.unknownKeys(block, pointer, BLOCK_KEYS, "a server's toolgate block");
  const namespace = problems.string(block, "namespace", pointer, '"github"');
  if (namespace !== undefined) {
    if (NAMESPACE.test(namespace)) out.namespace = namespace;
    else
      problems.add(
        join(pointer, "namespace"),
        `a namespace is up to 48 letters, digits, _ or -; received ${JSON.stringify(namespace)}`,
        `write it as "${serverName.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 48)}", or "" for no prefix`,
      );
  }
  const include = patterns(block, "include", pointer, problems);
  if (include !== undefined) out.include = include;
  out.exclude = patterns(block, "exclude", pointer, problems) ?? [];
  assign(out, "prompts", listPatterns(block, "prompt", pointer, problems));
  assign(out, "resources", listPatterns(block, "resource", pointer, problems));
  const effect = readEffect(block, pointer, problems);
  if (effect !== undefined) out.effect = effect;
  const tools = problems.object(block, "tools", pointer, '{"create_issue": {"effect": "write"}}');
  for (const [tool, value] of Object.entries(tools ?? {}))
    out.tools[tool] = readTool(value, join(pointer, "tools", tool), problems);
  assign(out, "budget_tokens", problems.whole(block, "budget_tokens", pointer, 50, 1_000_000));
  assign(out, "timeout_ms", problems.whole(block, "timeout_ms", pointer, 100, DAY_MS));
  assign(out, "task_timeout_ms", taskTimeout(block, pointer, problems));
  out.sandbox = problems.boolean(block, "sandbox", pointer) ?? false;
  assign(out, "concurrency", problems.whole(block, "concurrency", pointer, 1, 10_000));
  assign(out.rate_limits, "server", rate(block, "rate_limit", pointer, problems));
  assign(out.rate_limits, "tool", rate(block, "tool_rate_limit", pointer, problems));
  assign(out.rate_limits, "grant", rate(block, "grant_rate_limit", pointer, problems));
  return out;
}

function assign<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}

function readEffect(obj: Record<string, unknown>, pointer: string, problems: Problems): Effect | undefined {
  const v = obj.effect;
  if (v === undefined) return undefined;
  if (EFFECTS.includes(v as Effect)) return v as Effect;
  problems.add(
    join(pointer, "effect"),
    `expected one of ${EFFECTS.join(", ")}, received ${describe(v)}`,
    'write "read" (A0), "idempotent" (A1), "write" (A2) or "destructive" (A3)',
  );
  return undefined;
}

function readTool(value: unknown, pointer: string, problems: Problems): ToolOverride {
  const out: ToolOverride = {};
  if (!isPlainObject(value)) {
    problems.add(pointer, `expected an object, received ${describe(value)}`, 'write it as {"effect": "read"}');
    return out;
  }
  problems.unknownKeys(value, pointer, TOOL_KEYS, "a tool's override");
  assign(out, "effect", readEffect(value, pointer, problems));
  assign(out, "rate_limit", rate(value, "rate_limit", pointer, problems));
  assign(out, "timeout_ms", problems.whole(value, "timeout_ms", pointer, 100, DAY_MS));
  assign(out, "task_timeout_ms", taskTimeout(value, pointer, problems));
  assign(out, "budget_tokens", problems.whole(value, "budget_tokens", pointer, 50, 1_000_000));
  return out;
}

function patterns(obj: Record<string, unknown>, key: string, pointer: string, problems: Problems) {
  const list = problems.strings(obj, key, pointer, '["search_*", "get_file_contents"]');
  if (list === undefined) return undefined;
  list.forEach((p, i) => {
    if (!PATTERN.test(p))
      problems.add(
        join(pointer, key, i),
        `a tool name or pattern is letters, digits, _ . - and *; received ${JSON.stringify(p)}`,
        "name the upstream's tool as its tools/list does, e.g. read_file, or read_* for every tool starting so",
      );
  });
  return list;
}

const LIST_EXAMPLES = {
  prompt: '["review_*", "summarise"]',
  resource: '["file:///docs/*"]',
};

/** `include_prompts`/`exclude_prompts` or `include_resources`/`exclude_resources`, each entry checked; undefined when neither is given. */
function listPatterns(
  obj: Record<string, unknown>,
  kind: "prompt" | "resource",
  pointer: string,
  problems: Problems,
): ListPatterns | undefined {
  const read = (key: string) => {
    const list = problems.strings(obj, key, pointer, LIST_EXAMPLES[kind]);
    list?.forEach((p, i) => {
      const problem = filterPatternProblem(kind, p);
      if (problem !== null)
        problems.add(
          join(pointer, key, i),
          `expected a ${kind === "prompt" ? "prompt name" : "resource URI"} or * pattern, received ${describe(p)}: ${problem}`,
          kind === "prompt"
            ? "name the prompt as the upstream's prompts/list does, e.g. summarise, or review_* for every prompt starting so"
            : "write the URI as the upstream's resources/list does, e.g. file:///docs/readme.md, or file:///docs/* for every URI starting so",
        );
    });
    return list;
  };
  const include = read(`include_${kind}s`);
  const exclude = read(`exclude_${kind}s`);
  if (include === undefined && exclude === undefined) return undefined;
  return { ...(include !== undefined ? { include } : {}), exclude: exclude ?? [] };
}

function rate(obj: Record<string, unknown>, key: string, pointer: string, problems: Problems) {
  const v = problems.object(obj, key, pointer, '{"calls": 60, "window_ms": 60000}');
  if (v === undefined) return undefined;
  const at = join(pointer, key);
  problems.unknownKeys(v, at, RATE_KEYS, "a rate limit");
  const calls = problems.whole(v, "calls", at, 1, 1_000_000);
  const window = problems.whole(v, "window_ms", at, 1, 7 * DAY_MS);
  for (const k of RATE_KEYS)
    if (v[k] === undefined)
      problems.add(join(at, k), `a rate limit needs ${k}`, 'write it as {"calls": 60, "window_ms": 60000}');
  return calls !== undefined && window !== undefined
    ? ({ calls, window_ms: window } satisfies RateLimitConfig)
    : undefined;
}
