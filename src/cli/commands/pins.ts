/**
 * `toolgate pins`: the pinned definitions of upstream tools, as a proxy with `--config` keeps
 * them in its store (shared by its replicas). A definition that changed since it was pinned is
 * held — not listed, calls refused — until an operator reviews and accepts it here.
 *   toolgate pins list SERVER [--store URL] [--json]
 *   toolgate pins diff SERVER [TOOL] [--store URL] [--json]
 *   toolgate pins accept SERVER [TOOL] [--hash HASH] [--store URL] [--json]
 * SERVER is the name under `mcpServers`; TOOL the upstream's own tool name. `diff` shows what
 * changed field by field and the lint findings (TG011 tool poisoning among them) of the new
 * definition; `accept` without TOOL accepts every held tool of SERVER, each exactly as diff showed
 * it (a definition that changed again meanwhile stays held: pass `--hash` to name the one reviewed).
 * Exit 0; 1 when diff finds something held or accept finds nothing to accept; 2 for bad input or a
 * store that does not answer.
 */
import type { Command } from "commander";
import { canonicalize } from "../../canonical/jcs.js";
import type { JsonValue } from "../../core/json.js";
import type { GuardStore, PinRecord } from "../../idempotency/guard-store.js";
import { openGuardStore } from "../../idempotency/open-guard.js";
import { PINNED_FIELDS } from "../../idempotency/pins.js";
import { escapeUntrusted, jsonForDisplay } from "../../observation/escape.js";
import { lintTool } from "../../schema/lint/index.js";
import type { LintFinding } from "../../schema/lint/finding.js";
import { CliError, EXIT, printJson } from "../io.js";
import { storeFlags, stateLocation, type StateFlags } from "../store.js";

interface Common extends StateFlags {
  store: string;
  json?: boolean;
}

const iso = (ms: number) => new Date(ms).toISOString();

async function withGuard<T>(flags: Common, run: (store: GuardStore) => Promise<T>): Promise<T> {
  const { workspace, stateDir } = stateLocation(flags);
  const store = await openGuardStore(flags.store, { workspace, stateDir, mustExist: true });
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}

/** One changed field of a held definition: before and after, as JSON. */
export interface FieldChange {
  field: string;
  before: JsonValue | undefined;
  after: JsonValue | undefined;
}

export interface HeldTool {
  tool: string;
  pinned_hash: string;
  pending_hash: string;
  since: number;
  changes: FieldChange[];
  findings: LintFinding[];
}

/** What changed between the pin and the pending definition, and what the linter says of the new one. */
export function heldTool(pin: PinRecord): HeldTool | null {
  if (pin.pending === null) return null;
  const before = pin.definition as Record<string, JsonValue>;
  const after = pin.pending.definition as Record<string, JsonValue>;
  const same = (a: JsonValue | undefined, b: JsonValue | undefined) =>
    a === undefined || b === undefined ? a === b : canonicalize(a) === canonicalize(b);
  return {
    tool: pin.tool,
    pinned_hash: pin.hash,
    pending_hash: pin.pending.hash,
    since: pin.pending.seen_at,
    changes: PINNED_FIELDS.filter((f) => !same(before[f], after[f])).map((f) => ({
      field: f,
      before: before[f],
      after: after[f],
    })),
    findings: lintTool(after),
  };
}

/** The lines an operator reads before accepting: every value shown escaped, it came from the upstream. */
export function renderHeld(server: string, h: HeldTool): string {
  const e = escapeUntrusted;
  const show = (v: JsonValue | undefined) => (v === undefined ? "(absent)" : jsonForDisplay(v));
  const lines = [`${e(h.tool)}  held since ${iso(h.since)}: its definition changed after it was pinned`];
  for (const c of h.changes) lines.push(`  ${c.field}:`, `    - ${show(c.before)}`, `    + ${show(c.after)}`);
  if (h.findings.length === 0) lines.push("  lint of the new definition: no findings");
  else {
    lines.push("  lint of the new definition:");
    for (const f of h.findings) lines.push(`    ${f.severity} ${f.rule} ${f.pointer || "/"}: ${e(f.message)}`);
  }
  lines.push(`  accept: toolgate pins accept ${e(server)} ${e(h.tool)} --hash ${h.pending_hash}`);
  return lines.join("\n");
}

export function register(program: Command): void {
  const pins = program
    .command("pins")
    .description(
      "review and accept changed definitions of upstream tools (a proxy with --config holds them until then)",
    );

  storeFlags(
    pins
      .command("list")
      .description("list the pinned tools of a server, held ones marked HELD")
      .argument("<server>", "the server's name under mcpServers"),
  ).action(async (server: string, flags: Common) => {
    const list = await withGuard(flags, (store) => store.pins.list(server));
    if (flags.json) return printJson(list);
    if (list.length === 0) process.stdout.write(`no pins for ${escapeUntrusted(server)}\n`);
    for (const p of list)
      process.stdout.write(
        `${escapeUntrusted(p.tool)}  ${p.pending ? "HELD" : "pinned"}  ${p.hash.slice(0, 16)}  since ${iso(p.pinned_at)}\n`,
      );
  });

  storeFlags(
    pins
      .command("diff")
      .description("show what changed in each held definition and the lint findings of the new one")
      .argument("<server>", "the server's name under mcpServers")
      .argument("[tool]", "one tool (the upstream's own name); default every held tool"),
  ).action(async (server: string, tool: string | undefined, flags: Common) => {
    const list = await withGuard(flags, (store) => store.pins.list(server));
    if (tool !== undefined && !list.some((p) => p.tool === tool))
      throw new CliError(
        `${server} has no pinned tool ${JSON.stringify(tool)}; toolgate pins list ${server} lists them`,
      );
    const held = list
      .filter((p) => tool === undefined || p.tool === tool)
      .map(heldTool)
      .filter((h) => h !== null);
    if (flags.json) printJson(held);
    else if (held.length === 0) process.stdout.write(`nothing of ${escapeUntrusted(server)} is held\n`);
    else process.stdout.write(held.map((h) => renderHeld(server, h)).join("\n\n") + "\n");
    if (held.length > 0) process.exitCode = EXIT.findings;
  });

  storeFlags(
    pins
      .command("accept")
      .description("pin the held definition of a tool (or of every held tool of the server)")
      .argument("<server>", "the server's name under mcpServers")
      .argument("[tool]", "one tool (the upstream's own name); default every held tool")
      .option("--hash <hash>", "accept only this pending definition (the hash pins diff shows)"),
  ).action(async (server: string, tool: string | undefined, flags: Common & { hash?: string }) => {
    if (flags.hash !== undefined && tool === undefined)
      throw new CliError(
        "--hash names one tool's definition: give the TOOL too, e.g. toolgate pins accept SERVER TOOL --hash HASH",
      );
    const accepted = await withGuard(flags, async (store) => {
      const held = (await store.pins.list(server)).filter((p) => p.pending && (tool === undefined || p.tool === tool));
      const out: PinRecord[] = [];
      for (const p of held) {
        const pin = await store.pins.accept(server, p.tool, flags.hash ?? p.pending!.hash, Date.now());
        if (pin) out.push(pin);
      }
      return out;
    });
    if (flags.json) printJson(accepted);
    else if (accepted.length === 0)
      process.stdout.write(
        `nothing accepted: ${tool === undefined ? `nothing of ${escapeUntrusted(server)} is held` : `no held definition of ${escapeUntrusted(tool)}${flags.hash ? " with that hash (it changed again: run pins diff)" : ""}`}\n`,
      );
    else
      for (const p of accepted)
        process.stdout.write(`accepted ${escapeUntrusted(p.tool)}: pinned ${p.hash.slice(0, 16)}\n`);
    if (accepted.length === 0) process.exitCode = EXIT.findings;
  });
}
