/**
 * One request from the pass-through to an upstream (`ask`: within the proxy's time limit, a
 * failure relayed as a protocol error naming the upstream, an answer over `MAX_ANSWER_CHARS`
 * refused by `bounded`), and the shapes the pass-through's modules share: the upstream a request
 * goes to (`PassThroughSource`), what it declared, the items served and whom they belong to.
 */
import { ProtocolError, ProtocolErrorCode, type Client } from "@modelcontextprotocol/client";
import { z } from "zod";
import { escapeUntrusted, shownValue } from "../../observation/escape.js";
import type { ListFilter } from "./aggregate-catalog.js";

/** A read's or a prompt's answer as JSON, characters: 2 MiB of media once base64-encoded, or 3 MiB of text. */
export const MAX_ANSWER_CHARS = 3 * 1024 * 1024;

/** What the upstream a pass-through request goes to is: its name, how to reach it, what it declared. */
export interface PassThroughSource {
  /** The server's name in messages (its config key, or the upstream command). */
  server: string;
  /** The live client (reconnecting when the upstream has gone), as tools use it (`UpstreamLink`). */
  link: { get(what: string): Client | Promise<Client>; readonly client: Client | null };
  /** The namespace its prompts are published under ("" for none). */
  namespace: string;
  /** Each request's time limit, ms (the one its tools have). */
  timeoutMs: number;
  /**
   * Marks a request to the upstream in flight until the returned function is called, so a log
   * message it sends meanwhile is nobody's (`UpstreamNotices.enter`): with one tool call beside
   * it, that call's caller (maybe another tenant) would get what the upstream said for this one.
   */
  inFlight?: () => () => void;
  /** Which of its prompts are served (absent: all); a hidden one answers as one it never had. */
  prompts?: ListFilter;
  /** Which of its resources and templates are served, and which URIs read (absent: all); a hidden one answers as absent. */
  resources?: ListFilter;
}

export interface PassThroughOptions {
  separator: string;
  log: (line: string) => void;
}

export type Item = Record<string, unknown>;
export interface Owned {
  source: PassThroughSource;
  item: Item;
}
export interface Template extends Owned {
  matches: (uri: string) => boolean;
}
export interface PublishedPrompt extends Owned {
  name: string;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function invalid(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message);
}

export function shown(value: string): string {
  return shownValue(value, 120);
}

/** A read as the server hands it over: its signal, and whom to tell which upstream it goes to (its audit line names it). */
export interface Routed {
  signal: AbortSignal;
  routed?(server: string): void;
}

/** Why an upstream request failed, as a protocol error naming the upstream. */
function relayed(server: string, method: string, err: unknown): ProtocolError {
  const message = escapeUntrusted(String((err as Error)?.message ?? err).slice(0, 1_000));
  if (err instanceof ProtocolError) {
    // A -32002 (resource not found, an earlier revision's code) is the -32602 of this one.
    const code = err.code === -32002 ? ProtocolErrorCode.InvalidParams : err.code;
    return new ProtocolError(code, `${method}: the upstream ${server} answered: ${message}`);
  }
  return new ProtocolError(
    ProtocolErrorCode.InternalError,
    `${method}: the upstream ${server} gave no usable answer (${message}); try again, or ask whoever runs toolgate proxy to check it`,
  );
}

/**
 * A list page as it arrives, any object: each item is rebuilt from its known fields here
 * (`checkedResource`, `checkedPrompt`), so one item's bad value (a priority of 7) costs that
 * value, not the whole list, as the SDK's check of the result would make it.
 */
export const ANY_PAGE = z.looseObject({});

/**
 * One request to an upstream within the time limit; a failure is a protocol error naming the
 * upstream. The SDK checks the answer against the method's result schema unless `asIs` is given.
 */
export async function ask(
  source: PassThroughSource,
  method: string,
  params: Item,
  signal?: AbortSignal,
  asIs?: typeof ANY_PAGE,
): Promise<Item> {
  const leave = source.inFlight?.() ?? (() => {});
  try {
    const live = source.link.get(method);
    const client = live instanceof Promise ? await live : live;
    const request = client.request as (r: { method: string; params: Item }, ...rest: object[]) => Promise<unknown>;
    const options = { timeout: source.timeoutMs, ...(signal ? { signal } : {}) };
    const answer = await (asIs
      ? request.call(client, { method, params }, asIs, options)
      : request.call(client, { method, params }, options));
    return isObject(answer) ? answer : {};
  } catch (err) {
    throw relayed(source.server, method, err);
  } finally {
    leave();
  }
}

/** Refuses an answer whose JSON is longer than `MAX_ANSWER_CHARS`, naming what and how long. */
export function bounded(source: PassThroughSource, method: string, what: string, answer: Item): void {
  const chars = JSON.stringify(answer).length;
  if (chars > MAX_ANSWER_CHARS)
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `${method}: the upstream ${source.server}'s answer for ${what} is ${chars} characters of JSON, over the ${MAX_ANSWER_CHARS} toolgate proxy passes on; nothing of it was passed; read a smaller resource, or ask whoever runs the upstream`,
    );
}

export function declared(source: PassThroughSource, capability: "resources" | "prompts" | "completions"): boolean {
  return source.link.client?.getServerCapabilities()?.[capability] !== undefined;
}

/** What an upstream declared it tells of: `listChanged` for resources, prompts. */
export function tellsChanges(source: PassThroughSource, capability: "resources" | "prompts"): boolean {
  const declared = source.link.client?.getServerCapabilities()?.[capability] as { listChanged?: unknown } | undefined;
  return declared?.listChanged === true;
}
