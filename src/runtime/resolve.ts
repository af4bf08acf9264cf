/**
 * Stage 1, resolve: the proposal names a tool of the catalog. An unknown name is an observation
 * naming the closest tool and the available ones (docs/observations.md: the model must
 * be able to choose again without guessing).
 */
import { closest } from "../core/closest.js";
import { unsafeIdReason } from "../observation/escape.js";
import type { ToolSpec } from "../core/tool.js";
import { refuse, type Refusal } from "./call.js";
import type { Proposal } from "./types.js";

/** The tool the proposal names, or a refusal that helps the model choose. */
export function resolve(tools: ReadonlyMap<string, ToolSpec>, proposal: Proposal): ToolSpec | Refusal {
  const bad = malformedProposal(proposal);
  if (bad) return bad;
  const tool = tools.get(proposal.tool);
  if (tool) return tool;
  const names = [...tools.keys()];
  const close = closest(proposal.tool, names);
  const available = names.length ? `Available tools: ${names.join(", ")}.` : "This gateway has no tools.";
  return refuse(
    "unknown_tool",
    `There is no tool named ${JSON.stringify(proposal.tool)}. ${close ? `Did you mean ${JSON.stringify(close)}? ` : ""}${available} Call one of them by its exact name; nothing was executed.`,
    { detail: { ...(close ? { closest: close } : {}), available: names } },
  );
}

/** The proposal's fields that must be non-empty strings, with what each must be. */
const REQUIRED_STRINGS = [
  ["tool", "a non-empty string naming a tool"],
  ["trajectory_id", "a non-empty string"],
  ["call_id", "a non-empty string"],
] as const;
const OPTIONAL_STRINGS = ["capability", "idempotency_key", "approval_id"] as const;
/** Ids and the tool name (every field above) are printed in the audit, by the CLI and in prompts a person reads. */
const PRINTED = [...REQUIRED_STRINGS.map(([field]) => field), ...OPTIONAL_STRINGS];

/** The proposal envelope itself (ids, turn) comes from a client, not the schema: check it first. */
function malformedProposal(p: Proposal): Refusal | null {
  for (const [field, expected] of REQUIRED_STRINGS) {
    const value = p[field];
    if (typeof value !== "string" || value.length === 0) return badField(field, expected, value);
  }
  if (!Number.isSafeInteger(p.turn) || p.turn < 0) return badField("turn", "a non-negative integer", p.turn);
  for (const field of OPTIONAL_STRINGS) {
    const v = p[field];
    if (v !== undefined && (typeof v !== "string" || v.length === 0))
      return badField(field, "a non-empty string when present", v);
  }
  for (const field of PRINTED) {
    const v = p[field];
    const why = v === undefined ? null : unsafeIdReason(v);
    if (why) return unsafeField(field, why);
  }
  return null;
}

function unsafeField(field: string, why: string): Refusal {
  const expected = "text without control, bidi or invisible characters";
  return refuse(
    "invalid_proposal",
    `The call's ${field} ${why}. Fix the call envelope and send it again; nothing was executed.`,
    {
      issues: [
        {
          path: "",
          code: "invalid_proposal",
          message: `${field} ${why}`,
          expected,
          received: `a string with such a character`,
        },
      ],
    },
  );
}

function badField(field: string, expected: string, value: unknown): Refusal {
  const received = value === undefined ? "nothing" : (JSON.stringify(value) ?? typeof value);
  return refuse(
    "invalid_proposal",
    `The call's ${field} must be ${expected}; received ${received}. Fix the call envelope and send it again; nothing was executed.`,
    {
      issues: [{ path: "", code: "invalid_proposal", message: `${field} must be ${expected}`, expected, received }],
    },
  );
}
