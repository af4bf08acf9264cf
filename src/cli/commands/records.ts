/**
 * `toolgate records`: the idempotency records an operator inspects and settles (docs/idempotency.md:
 * IN_DOUBT calls wait for a probe or a person).
 *   toolgate records list [--state in_flight|completed|in_doubt] [--limit N] [--after KEY] [--store URL] [--json]
 *   toolgate records show KEY [--store URL] [--json]
 *   toolgate records settle KEY --outcome applied|not_applied [--result JSON] [--catalog MODULE] [--store URL] [--json]
 * `--store` defaults to `sqlite:`, the store toolgate serve keeps for the workspace (the current
 * folder, or `--workspace DIR`; `--state-dir DIR` as serve had it).
 * Exit 0; 1 when `show` finds no record for the key; 2 for bad input, settling an unknown key, a
 * record that cannot be settled, a store that does not answer, or a SQLite file that does not exist
 * (read and settle never create one).
 */
import type { Command } from "commander";
import { storeFlags, stateLocation, withExistingStore, type StateFlags } from "../store.js";
import { loadCatalogModule } from "../host/catalog-module.js";
import { outputCheck } from "../../mcp/server/output-check.js";
import { createCodingCatalog } from "../../tools/catalog.js";
import { overDefinitionsWorkspace } from "../catalog-sources.js";
import { listRecordViews, showRecord, type RecordView } from "../../idempotency/inspect.js";
import { resolveInDoubt, type ManualOutcome } from "../../idempotency/resolve-in-doubt.js";
import type { RecordState } from "../../idempotency/store.js";
import type { JsonValue } from "../../core/json.js";
import { CliError, EXIT, parseJson, printJson } from "../io.js";
import { wholeNumber } from "../whole-number.js";
import { escapeUntrusted, jsonForDisplay } from "../../observation/escape.js";

const STATES: Record<string, RecordState> = { in_flight: "IN_FLIGHT", completed: "COMPLETED", in_doubt: "IN_DOUBT" };

interface Common extends StateFlags {
  store: string;
  json?: boolean;
}

const iso = (ms: number | null) => (ms === null ? "never" : new Date(ms).toISOString());

/** One line per record: key, the state it reads as, tool, and the time that matters for that state. */
export function renderRecordLine(r: RecordView): string {
  const when =
    r.reads_as === "COMPLETED"
      ? `expires ${iso(r.expires_at)}`
      : r.state === "IN_FLIGHT"
        ? `${r.reads_as === "IN_DOUBT" ? "lease ended" : "lease until"} ${iso(r.lease_until)}`
        : `since ${iso(r.updated_at)}`;
  return `${escapeUntrusted(r.key)}  ${r.reads_as}${r.reads_as !== r.state ? " (stored IN_FLIGHT)" : ""}  ${r.tool === null ? "-" : escapeUntrusted(r.tool)}  ${when}`;
}

/** A record as the lines an operator reads before settling it. */
export function renderRecord(r: RecordView): string {
  // Keys, tool names, errors and results come from clients, models and tools: shown escaped.
  const e = (text: string) => escapeUntrusted(text);
  const lines = [
    renderRecordLine(r),
    `  created ${iso(r.created_at)}, updated ${iso(r.updated_at)}, owner ${e(r.owner)}`,
  ];
  if (r.fingerprint) lines.push(`  arguments fingerprint ${e(r.fingerprint)}`);
  if (r.error) lines.push(`  why: ${e(r.error)}`);
  if (r.state === "COMPLETED") lines.push(`  result: ${jsonForDisplay(r.result)}`);
  if (r.reads_as === "IN_DOUBT")
    lines.push(`  settle: toolgate records settle ${e(r.key)} --outcome applied --result JSON | --outcome not_applied`);
  return lines.join("\n");
}

/** Parses the settle options into a ManualOutcome, naming what is wrong. */
export function parseOutcome(outcome: string, result: string | undefined): ManualOutcome {
  if (outcome === "not_applied") {
    if (result !== undefined)
      throw new CliError("--result goes only with --outcome applied: a call that did not apply has no result");
    return { outcome };
  }
  if (outcome === "applied")
    return { outcome, result: result === undefined ? null : (parseJson(result, "--result") as JsonValue) };
  throw new CliError(`--outcome must be applied or not_applied; received ${JSON.stringify(outcome)}`);
}

/**
 * A settled result is what every repeat of the call receives, and a client rejects one that breaks
 * the tool's outputSchema: so it is checked before it is stored. The tool is looked up in the
 * `--catalog` module, else among the coding tools; a tool found in neither (a proxied one) is
 * stored unchecked, and stderr says so.
 */
async function checkSettledResult(
  key: string,
  tool: string,
  result: JsonValue,
  opts: StateFlags & { catalog?: string },
): Promise<void> {
  const tools = opts.catalog
    ? await loadCatalogModule(opts.catalog)
    : overDefinitionsWorkspace(stateLocation(opts).workspace, (workspace) => createCodingCatalog({ workspace }));
  const spec = tools.find((t) => t.name === tool);
  const shown = escapeUntrusted(tool);
  if (!spec) {
    const where = opts.catalog ? `the tools of ${escapeUntrusted(opts.catalog)}` : "the coding tools";
    process.stderr.write(
      `toolgate: ${shown} is not among ${where}, so --result is stored without checking it against ${shown}'s outputSchema${opts.catalog ? "" : " (pass --catalog MODULE, as toolgate serve had, for a tool of yours)"}\n`,
    );
    return;
  }
  if (!spec.outputSchema) return;
  const problems = outputCheck()(tool, spec.outputSchema, result);
  if (problems) {
    throw new CliError(
      `--result does not match the outputSchema of ${shown}, so every repeat of the call would receive a result its client rejects; nothing was settled:\n${problems.map((p) => `  - ${p}`).join("\n")}\nGive the result ${shown} would have returned (toolgate records show ${escapeUntrusted(key)} shows the call's record).`,
    );
  }
}

export function register(program: Command): void {
  const cmd = program
    .command("records")
    .description("inspect and settle idempotency records (IN_FLIGHT, COMPLETED, IN_DOUBT)");
  const common = storeFlags;

  common(cmd.command("list").description("records in key order; an IN_FLIGHT record past its lease lists as in_doubt"))
    .option("--state <state>", `only this state: ${Object.keys(STATES).join(", ")}`)
    .option("--limit <n>", "at most this many", "50")
    .option("--after <key>", "start after this key (the last key of the previous page)")
    .action(async (opts: Common & { state?: string; limit: string; after?: string }) => {
      const state = opts.state === undefined ? undefined : STATES[opts.state];
      if (opts.state !== undefined && !state)
        throw new CliError(
          `--state must be one of ${Object.keys(STATES).join(", ")}; received ${JSON.stringify(opts.state)}`,
        );
      const limit = wholeNumber(opts.limit, 1);
      if (limit === null)
        throw new CliError(`--limit must be a positive integer; received ${JSON.stringify(opts.limit)}`);
      const list = await withExistingStore(opts.store, opts, (store) =>
        listRecordViews(store, {
          limit,
          now: Date.now(),
          ...(state ? { state } : {}),
          ...(opts.after !== undefined ? { after: opts.after } : {}),
        }),
      );
      if (opts.json) return printJson(list);
      process.stdout.write(list.length ? list.map(renderRecordLine).join("\n") + "\n" : "no records\n");
    });

  common(
    cmd.command("show <key>").description("one record: state, timestamps, why it is in doubt, stored result"),
  ).action(async (key: string, opts: Common) => {
    const record = await withExistingStore(opts.store, opts, (store) => showRecord(store, key, Date.now()));
    // Not found is an answer about the store, not a usage error: exit 1, like a finding.
    if (!record)
      throw new CliError(
        `no record for key ${key} in ${opts.store}: it was never claimed, was released, or was COMPLETED and passed its TTL`,
        EXIT.findings,
      );
    if (opts.json) return printJson(record);
    process.stdout.write(renderRecord(record) + "\n");
  });

  common(
    cmd
      .command("settle <key>")
      .description("settle an IN_DOUBT call by hand, after checking whether its effect happened"),
  )
    .requiredOption(
      "--outcome <outcome>",
      "applied (the effect happened) or not_applied (it did not; the next call runs)",
    )
    .option(
      "--result <json>",
      "with applied: the result repeats of the call receive (default null), checked against the tool's outputSchema",
    )
    .option(
      "--catalog <module>",
      "the tools module toolgate serve --catalog had, to check --result against its tool's outputSchema (default: the coding tools)",
    )
    .action(async (key: string, opts: Common & { outcome: string; result?: string; catalog?: string }) => {
      const outcome = parseOutcome(opts.outcome, opts.result);
      const settled = await withExistingStore(opts.store, opts, async (store) => {
        if (outcome.outcome === "applied") {
          const record = await showRecord(store, key, Date.now());
          if (record?.tool) await checkSettledResult(key, record.tool, outcome.result, opts);
        }
        return resolveInDoubt(store, key, outcome);
      });
      if (opts.json) return printJson(settled);
      process.stdout.write(
        settled.settled === "completed"
          ? `${escapeUntrusted(key)} settled: COMPLETED; repeats receive ${jsonForDisplay(settled.record.result)}\n`
          : `${escapeUntrusted(key)} settled: released; the next call runs\n`,
      );
    });
}
