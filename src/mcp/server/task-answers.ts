/**
 * A 2026-07-28 client's answers to the questions a task holds (`runtime/task-ask.ts`: a proxied
 * upstream task's elicitation or sampling request), as `tasks/update` and a multi-round-trip retry
 * carry them in `inputResponses`: each answer under a key asked must have the shape its method's
 * result has — an elicitation's `{action: "accept" | "decline" | "cancel", content?}` (content an
 * object of strings, numbers, booleans or string arrays), a sampling request's `{role, content,
 * model, stopReason?}` — and is rebuilt from those fields only; all of them together at most
 * `MAX_ANSWER_BYTES` of JSON nested at most `MAX_ANSWER_DEPTH` deep. Keys not asked are left out
 * (the extension has a server ignore them); an answer the SDK dropped as no bare result object
 * (`droppedInputResponseKeys`) under a key asked is refused. A bad answer is a -32602 naming the key and field,
 * what was expected and what arrived.
 */
import type { InputRequest } from "../../core/tool.js";
import { isPlainObject, nestedDeeper, type JsonValue } from "../../core/json.js";
import { shownValue } from "../../observation/escape.js";
import { invalidParams } from "./protocol-error.js";

/** At most this many bytes of JSON for the answers of one request. */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** At most this deep nesting of an answer. */
export const MAX_ANSWER_DEPTH = 16;
const ACTIONS = ["accept", "decline", "cancel"];
const ROLES = ["assistant", "user"];

/** The answers `responses` gives to `questions`, checked and rebuilt; `where` names the field in errors. */
export function checkedAnswers(
  questions: Readonly<Record<string, InputRequest>>,
  responses: unknown,
  where: string,
  dropped: readonly string[] = [],
): Record<string, JsonValue> {
  if (!isPlainObject(responses))
    throw invalidParams(
      `${where} must be an object of answers keyed as the task's inputRequests; received ${shownValue(responses)}`,
    );
  // The SDK drops an entry that is no bare result object (not an object, or a {method, result} envelope).
  const bad = dropped.find((k) => Object.hasOwn(questions, k));
  if (bad !== undefined)
    throw invalidParams(
      `${where}[${JSON.stringify(bad)}] must be the bare result of ${questions[bad]!.method} (an object such as ${questions[bad]!.method === "sampling/createMessage" ? '{"role": "assistant", "content": {"type": "text", "text": "…"}, "model": "…"}' : '{"action": "accept", "content": {…}}'}, not wrapped in {method, result}); received something else`,
    );
  const asked = Object.keys(responses).filter((k) => Object.hasOwn(questions, k));
  const mine = Object.fromEntries(asked.map((k) => [k, responses[k]]));
  if (nestedDeeper(mine, MAX_ANSWER_DEPTH))
    throw invalidParams(`${where} must be nested at most ${MAX_ANSWER_DEPTH} levels deep; received deeper`);
  const bytes = Buffer.byteLength(JSON.stringify(mine));
  if (bytes > MAX_ANSWER_BYTES)
    throw invalidParams(`${where} must be at most ${MAX_ANSWER_BYTES} bytes of JSON; received ${bytes}`);
  const out: Record<string, JsonValue> = {};
  for (const key of asked) {
    const at = `${where}[${JSON.stringify(key)}]`;
    const method = questions[key]!.method;
    out[key] = method === "sampling/createMessage" ? samplingAnswer(mine[key], at) : elicitAnswer(mine[key], at);
  }
  return out;
}

function elicitAnswer(a: unknown, at: string): JsonValue {
  const what = "(the answer to an elicitation/create, as it returns it)";
  if (!isPlainObject(a))
    throw invalidParams(`${at} must be an object {action, content?} ${what}; received ${shownValue(a)}`);
  if (typeof a.action !== "string" || !ACTIONS.includes(a.action))
    throw invalidParams(`${at}.action must be one of ${ACTIONS.join(", ")} ${what}; received ${shownValue(a.action)}`);
  if (a.content === undefined) return { action: a.action };
  if (a.action !== "accept")
    throw invalidParams(`${at}.content goes only with action "accept"; received it with ${shownValue(a.action)}`);
  if (!isPlainObject(a.content))
    throw invalidParams(`${at}.content must be an object of the form's fields; received ${shownValue(a.content)}`);
  for (const [field, v] of Object.entries(a.content)) {
    const ok =
      typeof v === "string" ||
      typeof v === "boolean" ||
      (typeof v === "number" && Number.isFinite(v)) ||
      (Array.isArray(v) && v.every((x) => typeof x === "string"));
    if (!ok)
      throw invalidParams(
        `${at}.content[${JSON.stringify(field)}] must be a string, number, boolean or array of strings; received ${shownValue(v)}`,
      );
  }
  return { action: a.action, content: a.content as Record<string, JsonValue> };
}

function samplingAnswer(a: unknown, at: string): JsonValue {
  const what = "(the answer to a sampling/createMessage, as it returns it)";
  if (!isPlainObject(a))
    throw invalidParams(
      `${at} must be an object {role, content, model, stopReason?} ${what}; received ${shownValue(a)}`,
    );
  if (typeof a.role !== "string" || !ROLES.includes(a.role))
    throw invalidParams(`${at}.role must be one of ${ROLES.join(", ")} ${what}; received ${shownValue(a.role)}`);
  const blocks = Array.isArray(a.content) ? a.content : [a.content];
  if (blocks.length === 0 || !blocks.every((b) => isPlainObject(b) && typeof b.type === "string"))
    throw invalidParams(
      `${at}.content must be a content block {type, ...} or a non-empty array of them ${what}; received ${shownValue(a.content)}`,
    );
  if (typeof a.model !== "string" || a.model === "" || a.model.length > 256)
    throw invalidParams(
      `${at}.model must be the name of the model that answered (1 to 256 characters); received ${shownValue(a.model)}`,
    );
  if (a.stopReason !== undefined && typeof a.stopReason !== "string")
    throw invalidParams(`${at}.stopReason must be a string when present; received ${shownValue(a.stopReason)}`);
  return {
    role: a.role,
    content: a.content as JsonValue,
    model: a.model,
    ...(a.stopReason !== undefined ? { stopReason: a.stopReason } : {}),
  };
}
