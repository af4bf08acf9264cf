/**
 * The `id` and `method` of a JSON-RPC message too large to parse, read from the bytes kept of
 * its two ends, so the answer to it names the request the client waits on. Clients put the
 * scalar members at either end: the TypeScript SDK writes `{"method":…,"params":…,"jsonrpc":"2.0","id":5}`
 * (id last), the Python SDK `{"jsonrpc":"2.0","id":5,"method":…,"params":…}` (id first). The
 * head is read forward member by member and the tail backward, each stopping at the first value
 * it cannot read whole; only string and number values are taken, as JSON.parse reads them.
 */
import type { RequestId } from "@modelcontextprotocol/server";

export interface PeekedRequest {
  id: RequestId | null;
  method?: string;
}

/** Members read from each end at most: the scalar members of a request are few. */
const MAX_MEMBERS = 16;

export function peekRequest(head: string, tail: string): PeekedRequest {
  const found = new Map<string, unknown>();
  for (const [key, value] of [...forward(head), ...backward(tail)]) if (!found.has(key)) found.set(key, value);
  const id = found.get("id");
  const method = found.get("method");
  return {
    id: typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)) ? id : null,
    ...(typeof method === "string" ? { method } : {}),
  };
}

const WS = new Set([" ", "\t", "\r", "\n"]);

/** The leading members of `{…` whose values are strings or numbers, up to the first it cannot read. */
function forward(text: string): [string, unknown][] {
  const members: [string, unknown][] = [];
  let i = skip(text, 0);
  if (text[i] !== "{") return members;
  i++;
  while (members.length < MAX_MEMBERS) {
    i = skip(text, i);
    const key = stringAt(text, i);
    if (!key) return members;
    i = skip(text, key.end);
    if (text[i] !== ":") return members;
    i = skip(text, i + 1);
    const value = text[i] === '"' ? stringAt(text, i) : numberAt(text, i);
    if (!value) return members; // an object, array or literal: the rest is not read
    members.push([key.value, value.value]);
    i = skip(text, value.end);
    if (text[i] !== ",") return members;
    i++;
  }
  return members;
}

/** The trailing members of `…}` whose values are strings or numbers, read from the end. */
function backward(text: string): [string, unknown][] {
  const members: [string, unknown][] = [];
  let i = skipBack(text, text.length - 1);
  if (text[i] !== "}") return members;
  i--;
  while (members.length < MAX_MEMBERS) {
    i = skipBack(text, i);
    const value = text[i] === '"' ? stringEndingAt(text, i) : numberEndingAt(text, i);
    if (!value) return members;
    i = skipBack(text, value.start - 1);
    if (text[i] !== ":") return members;
    i = skipBack(text, i - 1);
    const key = text[i] === '"' ? stringEndingAt(text, i) : null;
    if (!key || typeof key.value !== "string") return members;
    members.push([key.value, value.value]);
    i = skipBack(text, key.start - 1);
    if (text[i] !== ",") return members;
    i--;
  }
  return members;
}

function skip(text: string, i: number): number {
  while (i < text.length && WS.has(text[i]!)) i++;
  return i;
}

function skipBack(text: string, i: number): number {
  while (i >= 0 && WS.has(text[i]!)) i--;
  return i;
}

function parse(slice: string): { value: unknown } | null {
  try {
    return { value: JSON.parse(slice) as unknown };
  } catch {
    return null;
  }
}

/** The JSON string starting at `i` (a `"`), or null when it does not end within `text`. */
function stringAt(text: string, i: number): { value: string; end: number } | null {
  if (text[i] !== '"') return null;
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === "\\") j++;
    else if (text[j] === '"') {
      const parsed = parse(text.slice(i, j + 1));
      return parsed ? { value: parsed.value as string, end: j + 1 } : null;
    }
  }
  return null;
}

/** The JSON string ending at `i` (a `"`): the opening quote is the first one before it not escaped. */
function stringEndingAt(text: string, i: number): { value: unknown; start: number } | null {
  for (let j = i - 1; j >= 0; j--) {
    if (text[j] !== '"') continue;
    let slashes = 0;
    while (j - 1 - slashes >= 0 && text[j - 1 - slashes] === "\\") slashes++;
    if (slashes % 2 === 1) continue;
    const parsed = parse(text.slice(j, i + 1));
    return parsed ? { value: parsed.value, start: j } : null;
  }
  return null;
}

const NUMBER_CHAR = /[0-9eE+\-.]/;

function numberAt(text: string, i: number): { value: number; end: number } | null {
  let j = i;
  while (j < text.length && NUMBER_CHAR.test(text[j]!)) j++;
  if (j === i || j === text.length) return null; // the number may go on past what was kept
  const parsed = parse(text.slice(i, j));
  return parsed && typeof parsed.value === "number" ? { value: parsed.value, end: j } : null;
}

function numberEndingAt(text: string, i: number): { value: number; start: number } | null {
  let j = i;
  while (j >= 0 && NUMBER_CHAR.test(text[j]!)) j--;
  if (j === i || j < 0) return null;
  const parsed = parse(text.slice(j + 1, i + 1));
  return parsed && typeof parsed.value === "number" ? { value: parsed.value, start: j + 1 } : null;
}
