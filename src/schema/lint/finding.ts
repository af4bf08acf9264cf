/**
 * What the linter reports, and the rule shapes it runs. Rules are pure functions over JSON
 * Schema: they read a tool descriptor and report findings, never throw, never mutate.
 */
import type { UncheckedDescriptor } from "../descriptor.js";
import type { Effect } from "../../core/tool.js";

export type Severity = "error" | "warning";

/** One finding: which rule, how bad, which tool, where (JSON Pointer into the descriptor), what and how to fix it. */
export interface LintFinding {
  /** `TG000` (schema unusable) or `TG001`…`TG011`. */
  rule: string;
  severity: Severity;
  tool: string;
  /** JSON Pointer into the tool descriptor as written, e.g. `/inputSchema/properties/path`. */
  pointer: string;
  message: string;
  fix: string;
}

export type FindingInput = Omit<LintFinding, "tool">;

/** Resolves `$ref`s and reports findings for one tool. */
export interface LintContext {
  readonly tool: UncheckedDescriptor;
  report(finding: FindingInput): void;
  /** Follows local `$ref`s (up to a bound); returns the target schema and its pointer, or undefined. */
  resolve(schema: unknown, pointer: string): { schema: unknown; pointer: string } | undefined;
}

/** Where a schema node sits; rules use it to decide whether a shape rule applies. */
export type NodeRole = "root" | "property" | "items" | "map-value" | "branch" | "allOf" | "def";

export interface SchemaNode {
  /** The node; `{}` for a boolean schema (see `boolean`). */
  schema: Record<string, unknown>;
  /** Set when the schema was written as `true` or `false`. */
  boolean?: boolean;
  pointer: string;
  role: NodeRole;
  /** Property name when role is "property". */
  name?: string;
  depth: number;
}

export type SchemaRule = (node: SchemaNode, ctx: LintContext) => void;
export type ToolRule = (tool: UncheckedDescriptor, ctx: LintContext) => void;
/** A catalog-level rule sees every tool at once (e.g. overlap between tools) and returns its findings. */
export type CatalogRule = (tools: readonly UncheckedDescriptor[]) => LintFinding[];

export const EFFECTS: readonly Effect[] = ["read", "idempotent", "write", "destructive"];
