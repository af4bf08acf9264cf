/**
 * `defineTool`: a typed tool from zod schemas. The model sees the published JSON Schema; the
 * handler, check, grant and probe receive the arguments parsed by zod (defaults applied,
 * typed as `z.output<input>`). A tool without an effect, or whose published schema fails an
 * error-level lint rule, is refused at definition time (docs/schemas.md).
 */
import type { z } from "zod";
import { NoEffectError, ToolgateError } from "../core/errors.js";
import { EFFECTS, type LintFinding } from "./lint/finding.js";
import { lintTool } from "./lint/index.js";
import { join } from "../core/pointer.js";
import { fieldLabel } from "./labels.js";
import { publishSchema } from "./publish.js";
import { renderIssues } from "./issue-text.js";
import {
  type CheckIssue,
  type Effect,
  type GrantRequest,
  type ProbeOutcome,
  type ToolContext,
  type ToolResult,
  type ToolSpec,
} from "../core/tool.js";

export interface ToolDefinition<I extends z.ZodType, R> {
  /** `^[a-zA-Z0-9_-]{1,64}$`, a verb and an object (docs/schemas.md: `search_customer_orders`, not `query`). */
  name: string;
  title?: string;
  /** MCP openWorldHint: false when the tool reaches nothing outside its own domain (MCP assumes true when absent). */
  openWorldHint?: boolean;
  /** What the tool does, when to use it rather than its neighbours, what it returns. */
  description: string;
  /** zod v4 object schema of the arguments. */
  input: I;
  output?: z.ZodType<R>;
  /** Side effect → authority level: read A0, idempotent A1, write A2, destructive A3. Required. */
  effect: Effect;
  handler: (args: z.output<I>, ctx: ToolContext) => R | ToolResult<R> | Promise<R | ToolResult<R>>;
  /** Semantic validation after the schema (existence, ownership, policy); its issues are observations. */
  check?: (args: z.output<I>, ctx: ToolContext) => CheckIssue[] | void | Promise<CheckIssue[] | void>;
  grant?: (args: z.output<I>, ctx: ToolContext) => GrantRequest | Promise<GrantRequest>;
  probe?: (args: z.output<I>, ctx: ToolContext) => ProbeOutcome | Promise<ProbeOutcome>;
  timeout_ms?: number;
  /** This call's own bound from its arguments, ms (can only lower `timeout_ms`); see `ToolSpec.timeoutFor`. */
  timeoutFor?: (args: z.output<I>) => number | undefined;
  budget_tokens?: number;
  /** A call may run as a task (see `ToolSpec.runsAsTask`). */
  runsAsTask?: boolean | "required";
}

/**
 * The spec's functions take the raw (schema-validated) arguments and parse them with zod
 * themselves, so any `defineTool` result registers as a plain `ToolSpec`.
 */
export function defineTool<I extends z.ZodType, R = unknown>(
  def: ToolDefinition<I, R>,
): ToolSpec<Record<string, unknown>, R> {
  const name = typeof def?.name === "string" ? def.name : String(def?.name);
  if (!EFFECTS.includes(def?.effect)) {
    throw new ToolgateError(
      "tool_invalid",
      `tool ${name}: effect must be one of ${EFFECTS.join(", ")}; received ${JSON.stringify(def?.effect) ?? "nothing"}. Declare the side effect: read (A0), idempotent (A1), write (A2, idempotency key) or destructive (A3, key + approval).`,
    );
  }
  if (typeof def.handler !== "function")
    throw new ToolgateError(
      "tool_invalid",
      `tool ${name}: handler must be a function; received ${typeof def.handler}.`,
    );
  if (!def.input || typeof (def.input as { safeParse?: unknown }).safeParse !== "function")
    throw new ToolgateError(
      "tool_invalid",
      `tool ${name}: input must be a zod schema, e.g. z.object({ path: z.string().max(1024) }).`,
    );

  // Parsed once per arguments object: check, grant, handler and probe see the same value.
  const parsed = new WeakMap<object, z.output<I>>();
  const parseArgs = (args: unknown): { ok: true; value: z.output<I> } | { ok: false; issues: CheckIssue[] } => {
    const cached = typeof args === "object" && args !== null ? parsed.get(args) : undefined;
    if (cached !== undefined) return { ok: true, value: cached };
    const r = def.input.safeParse(args);
    if (!r.success) return { ok: false, issues: r.error.issues.map(zodIssue) };
    if (typeof args === "object" && args !== null) parsed.set(args, r.data);
    return { ok: true, value: r.data };
  };
  const parse = (args: unknown): z.output<I> => {
    const r = parseArgs(args);
    // Reached only when the runtime skipped check: the call fails before any effect.
    if (!r.ok) throw new NoEffectError(renderIssues(name, r.issues), "invalid_arguments");
    return r.value;
  };

  const spec: ToolSpec<Record<string, unknown>, R> = {
    name,
    ...(def.title !== undefined ? { title: def.title } : {}),
    description: def.description,
    inputSchema: publishSchema(name, "input", def.input),
    ...(def.output ? { outputSchema: publishSchema(name, "output", def.output) } : {}),
    effect: def.effect,
    ...(def.openWorldHint !== undefined ? { mcp: { openWorldHint: def.openWorldHint } } : {}),
    // zod refinements the JSON Schema cannot say run here, as check issues, before the user's check; synchronous when
    // that check is (the gateway then validates without a promise).
    check: (args, ctx) => {
      const r = parseArgs(args);
      if (!r.ok) return r.issues;
      return def.check ? def.check(r.value, ctx) : undefined;
    },
    handler: (args, ctx) => def.handler(parse(args), ctx),
    ...(def.grant ? { grant: (args: Record<string, unknown>, ctx: ToolContext) => def.grant!(parse(args), ctx) } : {}),
    ...(def.probe ? { probe: (args: Record<string, unknown>, ctx: ToolContext) => def.probe!(parse(args), ctx) } : {}),
    ...(def.timeout_ms !== undefined ? { timeout_ms: def.timeout_ms } : {}),
    ...(def.timeoutFor ? { timeoutFor: (args: Record<string, unknown>) => def.timeoutFor!(parse(args)) } : {}),
    ...(def.budget_tokens !== undefined ? { budget_tokens: def.budget_tokens } : {}),
    ...(def.runsAsTask !== undefined ? { runsAsTask: def.runsAsTask } : {}),
  };

  const errors = lintTool(spec).filter((f) => f.severity === "error");
  if (errors.length > 0) {
    const lines = errors.map((f) => `  ${f.rule} ${f.pointer || "(tool)"}: ${f.message}. Fix: ${f.fix}${inZod(f)}`);
    throw new ToolgateError(
      "tool_lint",
      `tool ${name} is refused: its published schema fails ${errors.length} lint rule${errors.length === 1 ? "" : "s"}:\n${lines.join("\n")}`,
    );
  }
  return spec;
}

/**
 * The same fix said in zod, for a finding on a schema defineTool published from zod: the rules
 * speak JSON Schema (any catalog's language), the author writes `.max()` and `.default()`.
 */
function inZod(f: LintFinding): string {
  const hint = zodHint(f);
  return hint ? ` (in zod: ${hint})` : "";
}

function zodHint(f: LintFinding): string | undefined {
  const m = f.message;
  switch (f.rule) {
    case "TG002":
      return m.startsWith("required lists")
        ? undefined
        : "drop .optional(), or give the field .default(value), or say in .describe() what leaving it out means";
    case "TG003":
      if (m.includes(" is a string ")) return ".max(N) on the z.string(), or z.enum([...]) when the values are known";
      if (m.includes(" is an array ")) return ".max(N) on the z.array()";
      if (m.includes(" is a map "))
        return "z.record(...).meta({ maxProperties: N }), or a z.object() with the keys named";
      if (/ is an? (number|integer) /.test(m)) return ".min(a).max(b) on the number";
      return undefined;
    case "TG005":
      return 'z.discriminatedUnion("kind", [...]) with a z.literal() kind in every branch';
    case "TG007":
      return "a z.object() naming its fields, not z.record(), z.any(), z.unknown() or z.looseObject()";
    case "TG010":
      return f.pointer === "/name" || f.pointer === "/description" ? undefined : ".describe() on the field";
    default:
      return undefined;
  }
}

function zodIssue(issue: z.core.$ZodIssue): CheckIssue {
  const path = join("", ...issue.path.map(String));
  return { path, code: issue.code, message: `${fieldLabel(path)}: ${issue.message}` };
}
