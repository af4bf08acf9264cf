/**
 * `toolgate cap …`: issue, attenuate, inspect, verify and revoke capability tokens, and make a
 * key file. Each subcommand parses flags, calls the capability API and prints. Keys come from
 * `--keys FILE` or `TOOLGATE_KEYS` and never appear in any output.
 *
 *   cap keygen [--out FILE] [--kid K]          create a key file (default ~/.config/toolgate/keys.json), or add a kid to it (rotation)
 *   cap issue --rights read,write --objects path:/ws,host:api.example.com --ttl 1h [--max-cost N] [--budget N]
 *   cap attenuate TOKEN [--rights …] [--objects …] [--ttl 10m] …   (no key needed)
 *   cap inspect TOKEN [--json]                 blocks and the effective grant; verified when keys are there
 *   cap verify TOKEN --op OP --target OBJ [--cost N] [--store URL] [--json]   exit 0 allowed, 1 denied, 2 usage
 *   cap revoke ID|TOKEN [--reason R] [--store URL]
 * Keys: `--keys FILE`, else TOOLGATE_KEYS, else the default key file when it exists. `sqlite:` is the
 * state toolgate serve keeps for the workspace (`--workspace`, `--state-dir` as serve had them).
 * inspect and verify refuse a missing SQLite store (never create one); revoke creates it, with a note.
 */
import { existsSync } from "node:fs";
import type { Command } from "commander";
import { attenuate } from "../../capability/attenuate.js";
import { createCapabilityAuthority } from "../../capability/authority.js";
import { parseDuration } from "../../capability/duration.js";
import { summariseGrant, viewGrant } from "../../capability/grant.js";
import type { NarrowerInput } from "../../capability/input.js";
import { loadKeys } from "../../capability/keys.js";
import type { ArgBound, Primitive } from "../../capability/predicates.js";
import { parseObject } from "../../capability/objects.js";
import { revokeGrant } from "../../capability/revoke.js";
import { parseToken, TOKEN_PREFIX } from "../../capability/token.js";
import { sqlitePath } from "../../idempotency/open.js";
import type { Store } from "../../idempotency/store.js";
import { ToolgateError } from "../../core/errors.js";
import { defaultKeyFile } from "../../state/location.js";
import { CliError, EXIT, parseJson, printJson, readInput } from "../io.js";
import { openStoreFor, stateFlags, stateLocation, type StateFlags } from "../store.js";
import { keygen } from "../keygen.js";
import { escapeUntrusted, jsonForDisplay } from "../../observation/escape.js";

const DEFAULT_STORE = "sqlite:";

/**
 * The rights toolgate's own tools request (file_view/grep_search read, file_edit write,
 * bash_execute execute on path:<workspace>; connect for network objects). Rights are free-form
 * by design, so another one is accepted, with a warning: a typo would otherwise match nothing.
 */
export const STANDARD_RIGHTS = ["read", "write", "execute", "connect"] as const;

/** One stderr warning per right outside STANDARD_RIGHTS. */
function warnCustomRights(rights: readonly string[]): void {
  for (const r of rights) {
    if (!(STANDARD_RIGHTS as readonly string[]).includes(r)) {
      process.stderr.write(`toolgate: warning: right '${r}' is not one of ${STANDARD_RIGHTS.join(", ")}; it is accepted as a custom right\n`);
    }
  }
}

interface GrantFlags {
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
const csv = (v: string) => v.split(",").map((s) => s.trim()).filter((s) => s.length > 0);

function number(flag: string, v: string): number {
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n)) throw new CliError(`${flag} must be a number; received ${JSON.stringify(v)}`);
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
    ...(f.argMax ?? []).map((v) => namedValue("--arg-max", v)).map(([arg, n]) => ({ arg, max: number("--arg-max", n) })),
    ...(f.argMin ?? []).map((v) => namedValue("--arg-min", v)).map(([arg, n]) => ({ arg, min: number("--arg-min", n) })),
    ...(f.argOneOf ?? []).map((v) => namedValue("--arg-one-of", v)).map(([arg, list]) => ({ arg, oneOf: csv(list).map(primitive) })),
  ];
  if (args.length > 0) out.args = args;
  if (f.ttl !== undefined && f.expiresAt !== undefined) throw new CliError("give --ttl or --expires-at, not both");
  if (f.ttl !== undefined) out.ttl_ms = parseDuration(f.ttl, "--ttl");
  if (f.expiresAt !== undefined) {
    const ms = Date.parse(f.expiresAt);
    if (Number.isNaN(ms)) throw new CliError(`--expires-at must be an ISO-8601 time, e.g. 2026-12-31T23:00:00Z; received ${JSON.stringify(f.expiresAt)}`);
    out.expires_at = ms;
  }
  return out;
}

function grantOptions(cmd: Command): Command {
  return cmd
    .option("--rights <list>", `comma-separated rights; standard: ${STANDARD_RIGHTS.join(", ")} (bash_execute needs execute on path:<workspace>); others are accepted as custom rights`)
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

function readToken(arg: string): string {
  const text = arg === "-" ? readInput("-").trim() : arg;
  if (!text.startsWith(TOKEN_PREFIX)) throw new CliError(`TOKEN must be a ${TOKEN_PREFIX}… capability token (or - to read it from standard input)`);
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

function keysFrom(flags: { keys?: string }) {
  const file = keyFileFlag(flags);
  return loadKeys(file !== undefined ? { file } : {});
}

/** Keys when configured, else null (inspect works unverified without them). */
function optionalKeys(flags: { keys?: string }) {
  return keyFileFlag(flags) === undefined && !process.env.TOOLGATE_KEYS ? null : keysFrom(flags);
}

/**
 * Opens `--store` for inspect and verify: a missing SQLite file is refused, never created (a
 * mistyped path must not read as a store where nothing was revoked or spent).
 */
async function withStore<T>(url: string | undefined, flags: StateFlags, run: (store: Store | undefined) => Promise<T>): Promise<T> {
  if (url === undefined) return run(undefined);
  return withOpenStore(await openStoreFor(url, flags, { mustExist: true }), run);
}

async function withOpenStore<T>(store: Store, run: (store: Store) => Promise<T>): Promise<T> {
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}

/**
 * Opens the store `cap revoke` writes to. A missing SQLite file is created — a grant may be
 * revoked before the runtime's first run — and that is said on stderr, because a revocation in a
 * new file protects nothing unless the runtime uses that same store. Returns the created path.
 */
async function openRevocationStore(url: string, flags: StateFlags): Promise<{ store: Store; created: string | null }> {
  try {
    return { store: await openStoreFor(url, flags, { mustExist: true }), created: null };
  } catch (err) {
    if (!(err instanceof ToolgateError && err.code === "store_missing")) throw err;
  }
  const { workspace, stateDir } = stateLocation(flags);
  const created = sqlitePath(url, workspace, stateDir);
  const store = await openStoreFor(url, flags);
  process.stderr.write(
    `toolgate: note: created a new store at ${created} (there was none); the revocation takes effect only where the runtime uses this same store (toolgate serve --store); if you meant an existing one, pass it with --store\n`,
  );
  return { store, created };
}

function printGrant(token: string, json: boolean | undefined): void {
  const g = parseToken(token).grant;
  if (json) printJson({ token, id: g.id, grant: viewGrant(g) });
  else {
    process.stdout.write(token + "\n");
    process.stderr.write(`grant ${g.id}: ${escapeUntrusted(summariseGrant(g))}\n`);
  }
}

export function register(program: Command): void {
  const cap = program.command("cap").description("capability tokens C = (R, O, P, E): issue, attenuate, inspect, verify, revoke");

  cap
    .command("keygen")
    .description("create a key file (JSON kid → base64 key, mode 0600), or add a new kid to it for rotation")
    .option("--out <file>", "key file to create or extend, outside every workspace toolgate serves (default $XDG_CONFIG_HOME/toolgate/keys.json, i.e. ~/.config/toolgate/keys.json, in a 0700 folder)")
    .option("--kid <kid>", "key id (default k1, k2, …)")
    .option("--json", "print JSON")
    .action((flags: { out?: string; kid?: string; json?: boolean }) => {
      const r = keygen(flags.out, flags.kid);
      if (r.warning) process.stderr.write(`toolgate: warning: ${r.warning}\n`);
      if (flags.json) printJson({ file: r.file, kid: r.kid, kids: r.kids });
      else process.stdout.write(`wrote kid ${r.kid} to ${r.file} (kids: ${r.kids.join(", ")}; cap issue signs with the last one)\n`);
    });

  grantOptions(cap.command("issue").description("issue a root grant; prints the token"))
    .option("--keys <file>", "key file (default: TOOLGATE_KEYS, else ~/.config/toolgate/keys.json when it exists)")
    .option("--kid <kid>", "sign with this kid (default: the last in the key file)")
    .action((flags: GrantFlags & { keys?: string; kid?: string }) => {
      const input = grantInput(flags);
      if (input.rights === undefined || input.objects === undefined) throw new CliError("cap issue needs --rights and --objects, e.g. --rights read --objects path:/ws");
      if (input.ttl_ms === undefined && input.expires_at === undefined) throw new CliError("cap issue needs --ttl (e.g. 1h) or --expires-at");
      warnCustomRights(input.rights);
      const authority = createCapabilityAuthority({ keys: keysFrom(flags) });
      printGrant(authority.issue({ ...input, rights: input.rights, objects: input.objects, ...(flags.kid ? { kid: flags.kid } : {}) }), flags.json);
    });

  grantOptions(cap.command("attenuate").description("append a narrowing block (offline: no key needed); prints the child token"))
    .argument("<token>", "parent token (- reads standard input)")
    .action((token: string, flags: GrantFlags) => {
      printGrant(attenuate(readToken(token), grantInput(flags)), flags.json);
    });

  stateFlags(
    cap
      .command("inspect")
      .description("show the blocks and the effective grant; verified when keys are configured")
      .argument("<token>", "token (- reads standard input)")
      .option("--keys <file>", "key file (default: TOOLGATE_KEYS, else ~/.config/toolgate/keys.json when it exists; without keys the token is shown unverified)")
      .option("--store <url>", "also check revocation in this store (sqlite: is the one toolgate serve uses for the workspace)"),
  )
    .option("--json", "print JSON")
    .action(async (arg: string, flags: StateFlags & { keys?: string; store?: string; json?: boolean }) => {
      const token = readToken(arg);
      const parsed = parseToken(token);
      const keys = optionalKeys(flags);
      const report = await withStore(flags.store, flags, async (store) => {
        if (!keys) return { status: "unverified", reason: "no keys configured (--keys or TOOLGATE_KEYS)", blocks: parsed.blocks.map((b) => b.block), grant: viewGrant(parsed.grant) };
        return createCapabilityAuthority({ keys, ...(store ? { store } : {}) }).inspect(token);
      });
      if (flags.json) return printJson(report);
      // A holder writes its own blocks (offline attenuation): their text is shown escaped.
      const lines = [`status: ${report.status}${report.reason ? ` (${escapeUntrusted(report.reason)})` : ""}`, `grant: ${escapeUntrusted(summariseGrant(parsed.grant))}`];
      report.blocks.forEach((b, i) => lines.push(`block ${i}: ${jsonForDisplay(b)}`));
      for (const b of "budgets" in report ? report.budgets : []) lines.push(`budget of block ${b.block_id}: ${b.spent === null ? "? (pass --store to read it)" : b.spent} of ${b.limit} spent`);
      process.stdout.write(lines.join("\n") + "\n");
    });

  stateFlags(
    cap
    .command("verify")
    .description("the capability check for one request: exit 0 allowed, 1 denied (prints code and reason)")
    .argument("<token>", "token (- reads standard input)")
    .requiredOption("--op <right>", "the right the call needs, e.g. write")
    .requiredOption("--target <object>", "the object the call touches, e.g. path:/ws/a.txt")
    .option("--cost <n>", "cost of the call (default 1)")
    .option("--tool <name>", "the calling tool")
    .option("--args <json>", "the call's arguments, for argument bounds")
    .option("--keys <file>", "key file (default: TOOLGATE_KEYS, else ~/.config/toolgate/keys.json when it exists)")
    .option("--store <url>", "check revocation and spend budgets in this existing store (a real approval; a missing SQLite file is an error, not created; sqlite: is the one toolgate serve uses for the workspace)"),
  )
    .option("--json", "print JSON")
    .action(async (arg: string, flags: StateFlags & { op: string; target: string; cost?: string; tool?: string; args?: string; keys?: string; store?: string; json?: boolean }) => {
      const token = readToken(arg);
      const keys = keysFrom(flags);
      try {
        parseObject(flags.target);
      } catch (err) {
        // A malformed --target is the operator's typo, not a denial by the grant.
        throw new CliError(`--target: ${(err as Error).message}`);
      }
      const request = {
        op: flags.op,
        target: flags.target,
        ...(flags.cost !== undefined ? { cost: number("--cost", flags.cost) } : {}),
        ...(flags.tool !== undefined ? { tool: flags.tool } : {}),
        ...(flags.args !== undefined ? { args: parseJson(flags.args, "--args") } : {}),
      };
      const decision = await withStore(flags.store, flags, (store) => createCapabilityAuthority({ keys, ...(store ? { store } : {}) }).approve(token, request)).catch((err: unknown) => {
        if (err instanceof ToolgateError && err.code === "store_required") {
          throw new CliError("this capability is bounded by a budget: pass --store URL (the runtime's store) to check and spend it");
        }
        throw err;
      });
      if (flags.json) printJson(decision);
      else if (decision.allowed) process.stdout.write(`allowed: grant ${decision.grant_id}${decision.remaining_budget !== undefined ? `, budget left ${decision.remaining_budget}` : ""}\n`);
      else process.stdout.write(`denied: ${decision.code}: ${escapeUntrusted(decision.reason)}\n`);
      process.exitCode = decision.allowed ? EXIT.ok : EXIT.findings;
    });

  stateFlags(
    cap
      .command("revoke")
      .description("revoke a grant id (or a token's own id) and every grant attenuated from it")
      .argument("<id>", "grant id (cap_…) or a whole token")
      .option("--reason <text>", "why, kept with the revocation")
      .option("--store <url>", `store shared with the runtime (default ${DEFAULT_STORE}, the one toolgate serve uses for the workspace); a missing SQLite file is created, with a note on stderr`),
  )
    .option("--json", "print JSON")
    .action(async (arg: string, flags: StateFlags & { reason?: string; store?: string; json?: boolean }) => {
      let id = arg;
      let until: number | null = null;
      if (arg.startsWith(TOKEN_PREFIX) || arg === "-") {
        const g = parseToken(readToken(arg)).grant;
        id = g.id;
        until = g.exp;
      }
      const { store, created } = await openRevocationStore(flags.store ?? DEFAULT_STORE, flags);
      await withOpenStore(store, (s) => revokeGrant(s, id, { reason: flags.reason ?? null, until, now: Date.now() }));
      if (flags.json) printJson({ revoked: id, until, created_store: created });
      else process.stdout.write(`revoked ${id} (and every grant attenuated from it)\n`);
    });
}
