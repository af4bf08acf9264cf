/**
 * Idempotency keys (docs/idempotency.md): the key names the logical call, not the
 * attempt, so it is derived from the trajectory and recomputed identically after a crash.
 */
import { createHmac, hash } from "node:crypto";
import { ToolgateError } from "../core/errors.js";
import { canonicalize } from "./jcs.js";

/** The logical call a key is derived from. */
export interface KeyInput {
  trajectory_id: string;
  turn: number;
  call_id: string;
  tool: string;
  args: unknown;
}

export interface KeyOptions {
  /**
   * When set, the key is HMAC-SHA256 under this secret, so the endpoint's other clients cannot
   * guess keys (docs/idempotency.md).
   */
  secret?: string | Uint8Array;
}

/** A rejected key or key input: names the field, what was expected and what arrived. */
export class IdempotencyKeyError extends ToolgateError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super("invalid_idempotency_key", message);
    this.name = "IdempotencyKeyError";
  }
}

function requireString(field: string, value: unknown): string {
  if (typeof value === "string" && value.length > 0) return value;
  throw new IdempotencyKeyError(field, `${field} must be a non-empty string; received ${describe(value)}`);
}

function describe(value: unknown): string {
  if (typeof value === "string") return value.length === 0 ? "an empty string" : JSON.stringify(value);
  if (value === undefined) return "nothing";
  return typeof value === "number" || typeof value === "boolean" || value === null
    ? String(value)
    : `a ${typeof value}`;
}

/**
 * The canonical text hashed into a key: RFC 8785 JSON of the array
 * `[trajectory_id, turn, call_id, tool, args]`.
 *
 * Why not a `trajectory_id|turn|call_id|tool|args` join: `|` may occur inside a
 * field, so ("a|b", "c") and ("a", "b|c") produce the same text and the same key, and two
 * different calls would share one record (the second would receive the first's result).
 * A JSON array quotes and escapes every string, so distinct tuples give distinct texts:
 * the encoding is injective.
 */
export function keyMaterial(input: KeyInput): string {
  return `${tupleHead(input)},${canonicalize(input.args, "$.args")}]`;
}

/** The checked tuple without its closing bracket and arguments: `["traj-1",3,"call_7","orders.refund"`. */
function tupleHead(input: KeyInput): string {
  const trajectory = requireString("trajectory_id", input.trajectory_id);
  if (!Number.isSafeInteger(input.turn) || input.turn < 0) {
    throw new IdempotencyKeyError("turn", `turn must be a non-negative integer; received ${describe(input.turn)}`);
  }
  const call = requireString("call_id", input.call_id);
  const tool = requireString("tool", input.tool);
  return canonicalize([trajectory, input.turn, call, tool]).slice(0, -1);
}

/**
 * SHA-256 hex of `text` (as UTF-8), or HMAC-SHA256 hex under `options.secret`. The plain hash is
 * `crypto.hash`'s one call (Node ≥ 20.12): a `createHash` object per key cost a write about four
 * times as much, twice a call (the key and the fingerprint).
 */
const keyHex = (text: string, options: KeyOptions): string =>
  options.secret === undefined
    ? hash("sha256", text, "hex")
    : createHmac("sha256", options.secret).update(text, "utf8").digest("hex");

/**
 * k = H(canonical [trajectory_id, turn, call_id, tool, args]): SHA-256 hex, or HMAC-SHA256 hex
 * with `options.secret`. Throws `CanonicalJsonError` naming the path of a non-JSON argument.
 */
export function deriveIdempotencyKey(input: KeyInput, options: KeyOptions = {}): string {
  return keyHex(keyMaterial(input), options);
}

/**
 * `deriveIdempotencyKey(input, options)` and `fingerprint(input.args)` from one canonical text of
 * the arguments: what a write derives on every call, canonicalised once instead of twice.
 */
export function deriveKeyAndFingerprint(
  input: KeyInput,
  options: KeyOptions = {},
): { key: string; fingerprint: string } {
  const head = tupleHead(input);
  const args = canonicalize(input.args, "$.args");
  return { key: keyHex(`${head},${args}]`, options), fingerprint: hash("sha256", args, "hex") };
}

/** Where a client-supplied key is valid: one tool, for one holder (an issued grant, or a caller without one). */
export interface ClientKeyScope {
  tool: string;
  /** The issued grant's holder key, a transport's principal, or null when the gateway knows neither. */
  holder: string | null;
  key: string;
}

/**
 * The record key of a client-supplied key: the hash of `["client", holder, tool, key]`, never the key
 * itself. A client's key is chosen by the client, so taken as it is it would be one key space for every
 * tool and every caller: the same key and arguments on another tool would replay that tool's result, and
 * one caller could read or pre-empt another's records by guessing its keys. The leading tag keeps these
 * apart from derived keys, whose tuple has five parts.
 */
export function clientRecordKey(scope: ClientKeyScope, options: KeyOptions = {}): string {
  const key = validateClientKey(scope.key);
  const tool = requireString("tool", scope.tool);
  return keyHex(canonicalize(["client", scope.holder, tool, key]), options);
}

/** SHA-256 hex of the canonical arguments: what a record stores to refuse a reused key with other arguments. */
export function fingerprint(args: unknown): string {
  return hash("sha256", canonicalize(args, "$.args"), "hex");
}

/** Longest client-supplied key accepted (IETF Idempotency-Key draft practice; fits every store's key column). */
export const MAX_CLIENT_KEY_LENGTH = 255;

// C0 controls, DEL and C1 controls: invisible in logs and unsafe in headers.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Checks a key the client supplied instead of a derived one: 1–255 characters, no control
 * characters. Returns the key; throws `IdempotencyKeyError` saying what to change.
 */
export function validateClientKey(key: unknown, field = "idempotency_key"): string {
  if (typeof key !== "string" || key.length === 0) {
    throw new IdempotencyKeyError(
      field,
      `${field} must be a non-empty string of at most ${MAX_CLIENT_KEY_LENGTH} characters; received ${describe(key)}`,
    );
  }
  if (key.length > MAX_CLIENT_KEY_LENGTH) {
    throw new IdempotencyKeyError(
      field,
      `${field} must be at most ${MAX_CLIENT_KEY_LENGTH} characters; received ${key.length} characters; use a shorter key, e.g. a UUID or a SHA-256 hex digest`,
    );
  }
  const bad = CONTROL.exec(key);
  if (bad) {
    const code = bad[0].charCodeAt(0).toString(16).padStart(4, "0");
    throw new IdempotencyKeyError(
      field,
      `${field} must not contain control characters; received U+${code.toUpperCase()} at index ${bad.index}; remove it (keys are printed in logs and headers)`,
    );
  }
  return key;
}
