/**
 * The flags that bound 2026-07-28 `subscriptions/listen` streams, for `toolgate serve` and
 * `toolgate proxy` over stdio and Streamable HTTP alike: how many one client may hold open, and
 * how long one stays open before toolgate ends it gracefully (the client then listens again).
 */
import type { Command } from "commander";
import { ToolgateError } from "../../core/errors.js";
import { wholeNumber } from "../whole-number.js";
import { countFlag } from "./http-flags.js";
import {
  DEFAULT_MAX_LISTEN_MS,
  DEFAULT_MAX_LISTENS_PER_CLIENT,
  MAX_LISTEN_MS,
  type ListenOptions,
} from "../../mcp/transports/listen-hold.js";

export interface ListenFlags {
  maxListensPerClient?: string;
  maxListenMs?: string;
}

/** Shorter than this, a client would spend its listen re-listening; a cutoff this low is a typo. */
export const MIN_LISTEN_MS = 1000;

/** Adds `--max-listens-per-client` and `--max-listen-ms` to `cmd`. */
export function listenFlagOptions(cmd: Command): Command {
  return cmd
    .option(
      "--max-listens-per-client <n>",
      `2026-07-28 subscriptions/listen streams open at once per client (default ${DEFAULT_MAX_LISTENS_PER_CLIENT}): over --http per client as --max-sessions-per-client counts them, apart from its requests, more answered 429; over stdio on the connection, more refused with an error naming the bound`,
    )
    .option(
      "--max-listen-ms <ms>",
      `end a 2026-07-28 subscriptions/listen stream gracefully (its empty result, on which the client listens again) once it has been open this long, less up to a tenth at random (default ${DEFAULT_MAX_LISTEN_MS}, one hour; ${MIN_LISTEN_MS} to ${MAX_LISTEN_MS}; 0: never)`,
    );
}

/** `--max-listen-ms MS`: 0 or whole milliseconds from MIN_LISTEN_MS to MAX_LISTEN_MS; undefined when absent. */
export function parseMaxListenMs(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = wholeNumber(text, 0);
  if (ms === null || (ms !== 0 && ms < MIN_LISTEN_MS) || ms > MAX_LISTEN_MS)
    throw new ToolgateError(
      "bad_flag",
      `--max-listen-ms must be 0 (no cutoff) or a whole number of milliseconds from ${MIN_LISTEN_MS} to ${MAX_LISTEN_MS} (how long a subscriptions/listen stream stays open before toolgate ends it gracefully and the client listens again); received ${JSON.stringify(text)}; example --max-listen-ms ${DEFAULT_MAX_LISTEN_MS}`,
    );
  return ms;
}

/** The listen bounds the flags ask for (absent ones left to the transports' defaults). */
export function parseListenFlags(flags: ListenFlags): ListenOptions {
  const maxListensPerClient = countFlag("--max-listens-per-client", flags.maxListensPerClient);
  const maxListenMs = parseMaxListenMs(flags.maxListenMs);
  return {
    ...(maxListensPerClient !== undefined ? { maxListensPerClient } : {}),
    ...(maxListenMs !== undefined ? { maxListenMs } : {}),
  };
}
