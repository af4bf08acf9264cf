/**
 * An upstream task's input requests (`input_required`, the 2026-07-28 tasks extension), checked
 * before anyone downstream sees them: the upstream may be hostile. `inputRequests` must be an
 * object of at most `MAX_REQUESTS` requests under keys of 1–256 printable ASCII characters, each
 * `{method, params}` with a method the revision lets a server ask (`elicitation/create`,
 * `sampling/createMessage`) and params an object; the whole at most `MAX_BYTES` of JSON nested at
 * most `MAX_DEPTH` deep; an elicitation's message a string of at most `MAX_MESSAGE` characters
 * (passed on with its control, bidi and invisible characters shown as `\u{XXXX}`: a person reads
 * it), its mode form (with a `requestedSchema` object, whose titles, descriptions and enum names
 * are escaped alike) or url (with an absolute http(s) `url` of at
 * most `MAX_URL` visible characters); a sampling
 * request's `messages` an array and `maxTokens` a positive integer. Whatever fails is an
 * `UpstreamTaskError` naming the field, what was expected and what arrived.
 */
import type { Client } from "@modelcontextprotocol/client";
import type { CallAsk, InputRequest } from "../../core/tool.js";
import { isPlainObject, nestedDeeper } from "../../core/json.js";
import { escapeUntrusted, firstUnsafe, shownValue } from "../../observation/escape.js";
import { anyObject, UpstreamTaskError } from "./upstream-tasks.js";

/** The methods an upstream task may ask with. */
export const INPUT_METHODS = ["elicitation/create", "sampling/createMessage"] as const;
/** At most this many requests at once. */
export const MAX_REQUESTS = 8;
/** At most this many bytes of JSON for all of a status's requests together. */
export const MAX_BYTES = 64 * 1024;
/** At most this deep nesting of objects and arrays. */
export const MAX_DEPTH = 16;
/** At most this many characters of an elicitation's message. */
export const MAX_MESSAGE = 4_000;
/** At most this many characters of a url elicitation's URL. */
export const MAX_URL = 2_048;
const KEY = /^[\x21-\x7e]{1,256}$/;

/** The checked requests of `raw` (a task's `inputRequests`), or throws naming the field that fails. */
export function checkedInputRequests(raw: unknown, where: string): Record<string, InputRequest> {
  if (!isPlainObject(raw))
    throw new UpstreamTaskError(`${where} must be an object of input requests by key; received ${shownValue(raw)}`);
  const keys = Object.keys(raw);
  if (keys.length === 0 || keys.length > MAX_REQUESTS)
    throw new UpstreamTaskError(`${where} must hold 1 to ${MAX_REQUESTS} input requests; received ${keys.length}`);
  // Depth first: it stops at MAX_DEPTH, where serialising a hostile nesting could exhaust the stack.
  if (nestedDeeper(raw, MAX_DEPTH))
    throw new UpstreamTaskError(`${where} must be nested at most ${MAX_DEPTH} levels deep; received deeper`);
  const bytes = Buffer.byteLength(JSON.stringify(raw));
  if (bytes > MAX_BYTES)
    throw new UpstreamTaskError(`${where} must be at most ${MAX_BYTES} bytes of JSON; received ${bytes}`);
  const out: Record<string, InputRequest> = {};
  for (const key of keys) {
    if (!KEY.test(key))
      throw new UpstreamTaskError(
        `${where} keys must be 1 to 256 printable ASCII characters without spaces; received ${shownValue(key)}`,
      );
    const at = `${where}[${JSON.stringify(key)}]`;
    const r = raw[key];
    if (!isPlainObject(r))
      throw new UpstreamTaskError(`${at} must be an object {method, params}; received ${shownValue(r)}`);
    const { method, params } = r;
    if (typeof method !== "string" || !(INPUT_METHODS as readonly string[]).includes(method))
      throw new UpstreamTaskError(
        `${at}.method must be one of ${INPUT_METHODS.join(", ")}; received ${shownValue(method)}`,
      );
    if (!isPlainObject(params))
      throw new UpstreamTaskError(`${at}.params must be an object; received ${shownValue(params)}`);
    if (method === "elicitation/create") {
      checkElicitation(params, `${at}.params`);
      // A person reads it: control, bidi and invisible characters are shown, not obeyed.
      const shown: Record<string, unknown> = {
        ...params,
        message: escapeUntrusted(params.message as string, { newlines: true }),
      };
      if (isPlainObject(params.requestedSchema)) shown.requestedSchema = shownSchema(params.requestedSchema);
      out[key] = { method, params: shown };
    } else {
      checkSampling(params, `${at}.params`);
      out[key] = { method, params };
    }
  }
  return out;
}

function checkElicitation(p: Record<string, unknown>, at: string): void {
  if (typeof p.message !== "string" || p.message.length > MAX_MESSAGE)
    throw new UpstreamTaskError(
      `${at}.message must be a string of at most ${MAX_MESSAGE} characters; received ${typeof p.message === "string" ? `${p.message.length} characters` : shownValue(p.message)}`,
    );
  const mode = p.mode ?? "form";
  if (mode === "form") {
    if (!isPlainObject(p.requestedSchema))
      throw new UpstreamTaskError(
        `${at}.requestedSchema must be an object (a form's schema); received ${shownValue(p.requestedSchema)}`,
      );
  } else if (mode === "url") {
    if (typeof p.url !== "string")
      throw new UpstreamTaskError(`${at}.url must be a string; received ${shownValue(p.url)}`);
    const problem = urlProblem(p.url);
    if (problem !== null) throw new UpstreamTaskError(`${at}.url must be ${problem}; received ${shownValue(p.url)}`);
  } else throw new UpstreamTaskError(`${at}.mode must be "form" or "url"; received ${shownValue(mode)}`);
}

/** Keys of a form's schema whose strings a person reads: shown with their unsafe characters escaped. */
const READ_KEYS = new Set(["title", "description", "enumNames"]);

/**
 * `schema` (a form's `requestedSchema`, already bounded in depth) with every string a person reads
 * — a `title` or `description`, an `enumNames` entry, at any depth — escaped as the message is.
 */
function shownSchema(schema: unknown, read = false): unknown {
  if (typeof schema === "string") return read ? escapeUntrusted(schema) : schema;
  if (Array.isArray(schema)) return schema.map((v) => shownSchema(v, read));
  if (!isPlainObject(schema)) return schema;
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, shownSchema(v, READ_KEYS.has(k))]));
}

/** Why `url` may not be offered to a person to open, or null: an absolute http(s) URL, of at most `MAX_URL` characters, every character visible. */
function urlProblem(url: string): string | null {
  const what = `an absolute http or https URL of at most ${MAX_URL} characters with no control, bidi or invisible character`;
  if (url.length > MAX_URL || firstUnsafe(url) !== null) return what;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return what;
  }
  return parsed.protocol === "https:" || parsed.protocol === "http:" ? null : what;
}

function checkSampling(p: Record<string, unknown>, at: string): void {
  if (!Array.isArray(p.messages))
    throw new UpstreamTaskError(`${at}.messages must be an array; received ${shownValue(p.messages)}`);
  if (typeof p.maxTokens !== "number" || !Number.isInteger(p.maxTokens) || p.maxTokens < 1)
    throw new UpstreamTaskError(`${at}.maxTokens must be a positive integer; received ${shownValue(p.maxTokens)}`);
}

/** At most this many rounds of questions in one upstream task. */
export const MAX_ROUNDS = 16;

/** An upstream task waiting for input, as `followUpstreamTask` hands it on. */
export interface WaitingTask {
  taskId: string;
  inputRequests?: unknown;
}

export interface RelayOptions {
  /** The gateway's call. */
  signal: AbortSignal;
  /** The tasks/update's bound, ms. */
  requestTimeout: number;
  /** The upstream as the operator named it (already escaped): an elicitation's message says who asks (`askedBy`). */
  upstream?: string;
}

/** At most this many characters of the upstream's name in a relayed message. */
const MAX_NAME = 64;

/**
 * `request` as the person sees it: an elicitation's message begins by naming the upstream that
 * asks (a person answering in a client of toolgate would otherwise take it for toolgate's own
 * question). A sampling request is left as it is: its messages are a model's prompt.
 */
export function askedBy(request: InputRequest, upstream: string): InputRequest {
  if (request.method !== "elicitation/create") return request;
  const name = upstream.length > MAX_NAME ? `${upstream.slice(0, MAX_NAME)}…` : upstream;
  return {
    method: request.method,
    params: { ...request.params, message: `The MCP server "${name}" asks: ${String(request.params.message)}` },
  };
}

/**
 * The relay of one call's upstream task questions: each status's requests are checked, the ones
 * not answered before (a key is never reused over a task's life, so one the task still shows was
 * answered and not yet read) are put to the caller through `ask`, and its answers are sent to
 * the upstream task with `tasks/update`. Rejects (an `UpstreamTaskError`) past `MAX_ROUNDS`, or
 * when the caller cannot be asked, saying why.
 */
export function inputRelay(client: Client, ask: CallAsk, options: RelayOptions): (t: WaitingTask) => Promise<void> {
  const answered = new Set<string>();
  let rounds = 0;
  return async (t) => {
    const requests = checkedInputRequests(t.inputRequests, "tasks/get's answer.inputRequests");
    const open = Object.fromEntries(
      Object.entries(requests)
        .filter(([key]) => !answered.has(key))
        .map(([key, r]) => [key, options.upstream === undefined ? r : askedBy(r, options.upstream)]),
    );
    if (Object.keys(open).length === 0) return;
    if (++rounds > MAX_ROUNDS)
      throw new UpstreamTaskError(
        `the upstream's task ${t.taskId} asked for input more than ${MAX_ROUNDS} times; the upstream task was cancelled`,
      );
    let answers;
    try {
      answers = await ask(open, options.signal);
    } catch (err) {
      options.signal.throwIfAborted();
      const methods = [...new Set(Object.values(open).map((r) => r.method))].join(", ");
      throw new UpstreamTaskError(
        `the upstream's task ${t.taskId} asks for input (${methods}), and ${(err as Error).message}; the upstream task was cancelled: declare the capability in the client, or call a tool that needs no input`,
      );
    }
    for (const key of Object.keys(open)) answered.add(key);
    await client.request(
      { method: "tasks/update", params: { taskId: t.taskId, inputResponses: answers } } as never,
      anyObject,
      { signal: options.signal, timeout: options.requestTimeout },
    );
  };
}
