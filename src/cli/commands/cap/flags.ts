/**
 * What the `toolgate cap` subcommands parse alike: grant flags into the capability API's input
 * (`issue`, `attenuate`), a TOKEN argument, the key file (`--keys`, else TOOLGATE_KEYS, else the
 * default key file when it exists) and an optional `--store` opened as an existing store.
 */
import { existsSync } from "node:fs";
import type { Command } from "commander";
import { parseDuration } from "../../../capability/duration.js";
import type { NarrowerInput } from "../../../capability/input.js";
import { loadKeys } from "../../../capability/keys.js";
import type { ArgBound, Primitive } from "../../../capability/predicates.js";
import { TOKEN_PREFIX } from "../../../capability/token.js";
import type { Store } from "../../../idempotency/store.js";
import { defaultKeyFile } from "../../../state/location.js";
import { closest } from "../../../core/closest.js";
import { CliError, readInput } from "../../io.js";
import { withExistingStore, type StateFlags } from "../../store.js";

/**
 * The rights toolgate's own tools request (file_view/grep_search read, file_edit write,
 * bash_execute execute on path:<workspace>; connect for network objects). Rights are free-form
 * by design, so another one is accepted, with a warning: a typo would otherwise match nothing.
 */
export const STANDARD_RIGHTS = ["read", "write", "execute", "connect"] as const;

/** One stderr warning per right outside STANDARD_RIGHTS. */
export function warnCustomRights(rights: readonly string[]): void {
  for (const r of rights) {
    if (!(STANDARD_RIGHTS as readonly string[]).includes(r)) {
      const near = closest(r, STANDARD_RIGHTS);
      process.stderr.write(
        `toolgate: warning: right '${r}' is not one of ${STANDARD_RIGHTS.join(", ")}${near ? ` (did you mean '${near}'?)` : ""}; it is accepted as a custom right\n`,
      );
    }
  }
}

export interface GrantFlags {
  rights?: string;
  objects?: string;
  maxCost?: string;
  budget?: string;
  argMax?: string[];
  argMin?: string[];
  argOneOf?: string[];
  ttl?: string;
  expiresAt?: string;
  json?: boolean;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];
const csv = (v: string) =>
  v
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);

/** A number flag (`--max-cost`, `--budget`, `--cost`, argument bounds): any finite number. */
export function number(flag: string, v: string): number {
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n))
    throw new CliError(`${flag} must be a number; received ${JSON.stringify(v)}`);
  return n;
}

function namedValue(flag: string, v: string): [string, string] {
  const eq = v.indexOf("=");
  if (eq <= 0) throw new CliError(`${flag} must be NAME=VALUE, e.g. ${flag} amount=100; received ${JSON.stringify(v)}`);
  return [v.slice(0, eq), v.slice(eq + 1)];
}

/** `usd` → "usd", `3` → 3, `true` → true: JSON where it parses, a string otherwise. */
function primitive(v: string): Primitive {
  try {
    const p: unknown = JSON.parse(v);
    if (p === null || ["string", "number", "boolean"].includes(typeof p)) return p as Primitive;
  } catch {
    // not JSON: a bare string
  }
  return v;
}

/** Turns grant flags into the API's input; only flags that were given appear. */
export function grantInput(f: GrantFlags): NarrowerInput {
  const out: NarrowerInput = {};
  if (f.rights !== undefined) out.rights = csv(f.rights);
  if (f.objects !== undefined) out.objects = csv(f.objects);
  if (f.maxCost !== undefined) out.max_cost = number("--max-cost", f.maxCost);
  if (f.budget !== undefined) out.budget = number("--budget", f.budget);
  const args: ArgBound[] = [
    ...(f.argMax ?? [])
      .map((v) => namedValue("--arg-max", v))
      .map(([arg, n]) => ({ arg, max: number("--arg-max", n) })),
    ...(f.argMin ?? [])
      .map((v) => namedValue("--arg-min", v))
      .map(([arg, n]) => ({ arg, min: number("--arg-min", n) })),
    ...(f.argOneOf ?? [])
      .map((v) => namedValue("--arg-one-of", v))
      .map(([arg, list]) => ({ arg, oneOf: csv(list).map(primitive) })),
  ];
  if (args.length > 0) out.args = args;
  if (f.ttl !== undefined && f.expiresAt !== undefined) throw new CliError("give --ttl or --expires-at, not both");
  if (f.ttl !== undefined) out.ttl_ms = parseDuration(f.ttl, "--ttl");
  if (f.expiresAt !== undefined) {
    const ms = Date.parse(f.expiresAt);
    if (Number.isNaN(ms))
      throw new CliError(
        `--expires-at must be an ISO-8601 time, e.g. 2026-12-31T23:00:00Z; received ${JSON.stringify(f.expiresAt)}`,
      );
    out.expires_at = ms;
  }
  return out;
}

/** Adds the grant flags `grantInput` reads (and `--json`) to `cmd`. */
export function grantOptions(cmd: Command): Command {
  return cmd
    .option(
      "--rights <list>",
      `comma-separated rights; standard: ${STANDARD_RIGHTS.join(", ")} (bash_execute needs execute on path:<workspace>); others are accepted as custom rights`,
    )
    .option("--objects <list>", "comma-separated objects, e.g. path:/ws,host:*.example.com,repo:o/r,tenant:t,tool:NAME")
    .option("--max-cost <n>", "per-call cost ceiling")
    .option("--budget <n>", "cumulative budget, spent atomically in the store")
    .option("--arg-max <name=n>", "argument upper bound (repeatable)", collect)
    .option("--arg-min <name=n>", "argument lower bound (repeatable)", collect)
    .option("--arg-one-of <name=a,b>", "argument allowed values (repeatable)", collect)
    .option("--ttl <duration>", "lifetime from now: 90s, 10m, 1h, 7d")
    .option("--expires-at <iso>", "absolute expiry, ISO-8601")
    .option("--json", "print JSON");
}

/** The TOKEN argument: a `tg1.` token, or `-` for one read from standard input. */
export function readToken(arg: string): string {
  const text = arg === "-" ? readInput("-").trim() : arg;
  if (!text.startsWith(TOKEN_PREFIX))
    throw new CliError(`TOKEN must be a ${TOKEN_PREFIX}… capability token (or - to read it from standard input)`);
  return text;
}

/** `--keys`, else TOOLGATE_KEYS, else the default key file (`cap keygen`'s) when there is one. */
function keyFileFlag(flags: { keys?: string }): string | undefined {
  if (flags.keys !== undefined || process.env.TOOLGATE_KEYS) return flags.keys;
  try {
    const file = defaultKeyFile();
    return existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/** The key ring the flags name; an error when there is none. */
export function keysFrom(flags: { keys?: string }) {
  const file = keyFileFlag(flags);
  return loadKeys(file !== undefined ? { file } : {});
}

/** Keys when configured, else null (inspect works unverified without them). */
export function optionalKeys(flags: { keys?: string }) {
  return keyFileFlag(flags) === undefined && !process.env.TOOLGATE_KEYS ? null : keysFrom(flags);
}

/**
 * Runs `run` with `--store` when given, opened for inspect and verify: a missing SQLite file is
 * refused, never created (a mistyped path must not read as a store where nothing was revoked or
 * spent); without `--store`, with no store.
 */
export function withStoreFlag<T>(
  url: string | undefined,
  flags: StateFlags,
  run: (store: Store | undefined) => Promise<T>,
): Promise<T> {
  return url === undefined ? run(undefined) : withExistingStore(url, flags, run);
}
