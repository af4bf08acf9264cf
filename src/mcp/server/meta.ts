/**
 * Proposal ids over MCP. A `tools/call` may carry the ids that identify the logical call in its
 * `_meta` (the idempotency key identifies the logical call, not the attempt):
 * `toolgate/trajectory_id`, `toolgate/turn`, `toolgate/call_id`, `toolgate/idempotency_key`,
 * `toolgate/approval_id`, `toolgate/capability`. Over HTTP the capability may also arrive as
 * `Authorization: Bearer`; `_meta` wins because it is the more specific of the two.
 *
 * Without ids the session supplies them: the trajectory is the MCP session (a digest of its id) and every request
 * gets a fresh call id, marked `call_id_assigned` (never one an earlier session gave: `SessionIds.nextCallId`). That makes each attempt of an A2 call a new
 * logical call, so a client that retries a write without sending `toolgate/call_id` gets no
 * deduplication across attempts; an A3 attempt is the logical call of its approval instead (the
 * runtime matches it by tool, arguments, capability and trajectory: `runtime/approval-gate.ts`).
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { MAX_TOKEN_CHARS } from "../../capability/token.js";
import { escapeUntrusted, shownValue, unsafeIdReason } from "../../observation/escape.js";
import type { Proposal } from "../../runtime/types.js";

export const META_KEYS = {
  trajectory_id: "toolgate/trajectory_id",
  turn: "toolgate/turn",
  call_id: "toolgate/call_id",
  idempotency_key: "toolgate/idempotency_key",
  approval_id: "toolgate/approval_id",
  capability: "toolgate/capability",
} as const;

/** Ids a session hands out when the client sends none. */
export class SessionIds {
  private seq = 0;
  /**
   * `mcp-` and a one-way digest of the session id, so audit lines of one connection group
   * together while the audit (and anyone who reads it) never holds a session id a request could
   * present.
   */
  readonly trajectory_id: string;
  /**
   * `requestScoped`: the server answers one request of a trajectory that outlives it (a
   * 2026-07-28 HTTP request, whose trajectory is its caller's), so each call id is random: a
   * sequence would start at mcp-call-1 in every request, and a write sent again with the same
   * arguments would replay the first instead of running.
   */
  constructor(
    sessionId: string = randomUUID(),
    private readonly requestScoped = false,
  ) {
    this.trajectory_id = `mcp-${createHash("sha256").update("toolgate trajectory\0").update(sessionId).digest("base64url").slice(0, 22)}`;
  }
  /**
   * A call id for a call that brought none. The sequence is unique only under this session's own
   * trajectory: under one the client named (`ownTrajectory` false), which its next connection or
   * process names again, mcp-call-1 would name that one's first call too, and a write sent again
   * with the same arguments would replay it; so there, as in a request-scoped server, it is random.
   */
  nextCallId(ownTrajectory = true): string {
    if (this.requestScoped || !ownTrajectory) return `mcp-call-${randomBytes(12).toString("base64url")}`;
    this.seq += 1;
    return `mcp-call-${this.seq}`;
  }
}

/** A `_meta` field of the wrong type: named, with what was expected and how to fix it. */
export interface MetaIssue {
  field: string;
  message: string;
}

type Ids = Omit<Proposal, "tool" | "arguments">;

const MAX_ID = 512;

/** A capability grows by a block per delegation, past any id's length: it has the token's own limit. */
const MAX_CHARS: Partial<Record<string, number>> = { [META_KEYS.capability]: MAX_TOKEN_CHARS };

function stringField(meta: Record<string, unknown>, key: string): string | undefined | MetaIssue {
  const value = meta[key];
  if (value === undefined) return undefined;
  const max = MAX_CHARS[key] ?? MAX_ID;
  const example = key === META_KEYS.capability ? "tg1.…" : "c-1";
  if (typeof value === "string" && value.length > 0 && value.length <= max) {
    const why = unsafeIdReason(value);
    return why ? { field: `_meta["${key}"]`, message: `_meta["${key}"] ${why}` } : value;
  }
  return {
    field: `_meta["${key}"]`,
    message: `_meta["${key}"] must be a non-empty string of at most ${max} characters; received ${describe(value)}; example "${example}"`,
  };
}

/** What arrived, short and safe to print (it is the client's text). */
function describe(value: unknown): string {
  if (typeof value === "string")
    return value.length > 40 ? `a string of ${value.length} characters` : escapeUntrusted(JSON.stringify(value));
  return value === null ? "null" : Array.isArray(value) ? "an array" : `${typeof value} ${shownValue(value, 60)}`;
}

/**
 * The turn: a JSON integer ≥ 0, or the same integer written as a string in its one canonical
 * form ("3", not "03", "3.0" or " 3"), since some clients send every `_meta` value as a string
 * (the MCP Inspector CLI's `--tool-metadata key=value`). Any other spelling is refused rather
 * than guessed, because the turn is part of the idempotency key: two spellings of one turn must
 * not name two calls.
 */
function turnField(value: unknown): number | MetaIssue {
  if (value === undefined) return 0;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === "string" && /^(0|[1-9][0-9]*)$/.test(value) && Number.isSafeInteger(Number(value)))
    return Number(value);
  const field = `_meta["${META_KEYS.turn}"]`;
  const why =
    typeof value === "string" && /^\s*[+-]?[0-9.]+\s*$/.test(value)
      ? ` (as a string, only the integer's canonical digits: no sign, leading zero, fraction or space)`
      : "";
  return {
    field,
    message: `${field} must be an integer ≥ 0, as a JSON number or a string of its digits${why}; received ${describe(value)}; example 3 or "3"`,
  };
}

function isIssue(v: unknown): v is MetaIssue {
  return typeof v === "object" && v !== null && "field" in v;
}

/**
 * Reads the proposal ids from a request's `_meta`, filling the gaps from the session.
 * Returns the ids, or the first malformed field.
 */
export function idsFromMeta(
  meta: Record<string, unknown> | undefined,
  session: SessionIds,
  bearer?: string,
): { ok: true; ids: Ids } | { ok: false; issue: MetaIssue } {
  const m = meta ?? {};
  const fields: Partial<Record<keyof typeof META_KEYS, string>> = {};
  for (const name of ["trajectory_id", "call_id", "idempotency_key", "approval_id", "capability"] as const) {
    const v = stringField(m, META_KEYS[name]);
    if (isIssue(v)) return { ok: false, issue: v };
    if (v !== undefined) fields[name] = v;
  }
  const turn = turnField(m[META_KEYS.turn]);
  if (isIssue(turn)) return { ok: false, issue: turn };
  const ids: Ids = {
    trajectory_id: fields.trajectory_id ?? session.trajectory_id,
    turn,
    call_id: fields.call_id ?? session.nextCallId(fields.trajectory_id === undefined),
  };
  if (fields.call_id === undefined) ids.call_id_assigned = true;
  const capability = fields.capability ?? bearer;
  if (capability !== undefined) ids.capability = capability;
  if (fields.idempotency_key !== undefined) ids.idempotency_key = fields.idempotency_key;
  if (fields.approval_id !== undefined) ids.approval_id = fields.approval_id;
  return { ok: true, ids };
}

/** The token of an `Authorization: Bearer …` header, if any. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  const match = value ? /^Bearer\s+(\S+)\s*$/i.exec(value) : null;
  return match ? match[1] : undefined;
}
