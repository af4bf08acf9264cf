/**
 * Gateway configuration checks and lookups: observation budgets (docs/observations.md, "Observation
 * is a budget": default 2,000 o200k tokens, per tool and per gateway) and the key material
 * that must never appear in an observation.
 */
import { ToolgateError } from "../core/errors.js";
import type { ToolSpec } from "../core/tool.js";
import type { KeyRing } from "../capability/keys.js";
import { DEFAULT_BUDGET_TOKENS, MIN_BUDGET_TOKENS } from "../observation/budget.js";

/**
 * Observation budgets in o200k tokens. The operator's configuration wins over the catalog's:
 * `per_tool[name]` > `default_tokens` (when set) > the tool's own `budget_tokens` > 2,000.
 * The effective budget reaches the tool as `ctx.budget_tokens`, so tools that bound their own
 * output (file_view's window, grep_search's page, bash_execute's capture) fit it exactly.
 */
export interface Budgets {
  /** Tokens per observation for every tool without a `per_tool` entry; wins over a tool's own `budget_tokens`. Default:
   * the tool's, else 2,000. */
  default_tokens?: number;
  /** By tool name; wins over everything else. */
  per_tool?: Record<string, number>;
}

/** The budget of one call's observation (precedence on `Budgets`). `tool` is null for an unknown tool name. */
export function budgetFor(tool: ToolSpec | null, name: string, budgets: Budgets | undefined): number {
  return budgets?.per_tool?.[name] ?? budgets?.default_tokens ?? tool?.budget_tokens ?? DEFAULT_BUDGET_TOKENS;
}

/** Refuses budgets too small for a marker and unknown tool names, at configuration time. */
export function checkBudgets(budgets: Budgets | undefined, tools: ReadonlyMap<string, ToolSpec>): void {
  const check = (where: string, v: unknown) => {
    if (typeof v !== "number" || !Number.isInteger(v) || v < MIN_BUDGET_TOKENS) {
      throw new ToolgateError(
        "invalid_config",
        `${where} must be an integer of at least ${MIN_BUDGET_TOKENS} tokens (a cut needs room for its marker); received ${JSON.stringify(v)}; e.g. 2000`,
      );
    }
  };
  if (budgets?.default_tokens !== undefined) check("budgets.default_tokens", budgets.default_tokens);
  for (const [name, v] of Object.entries(budgets?.per_tool ?? {})) {
    if (!tools.has(name)) {
      throw new ToolgateError(
        "invalid_config",
        `budgets.per_tool names ${JSON.stringify(name)}, which is not a tool of this gateway (tools: ${[...tools.keys()].join(", ")})`,
      );
    }
    check(`budgets.per_tool.${name}`, v);
  }
  for (const t of tools.values())
    if (t.budget_tokens !== undefined) check(`tool ${t.name}: budget_tokens`, t.budget_tokens);
}

/** The capability root keys as text (base64 and base64url), so a leaked key is redacted too. */
export function keySecrets(keys: KeyRing | undefined): string[] {
  if (!keys) return [];
  const out: string[] = [];
  for (const kid of keys.kids) {
    const bytes = keys.key(kid)?.export();
    if (!bytes) continue;
    out.push(bytes.toString("base64"), bytes.toString("base64url"));
  }
  return out;
}
