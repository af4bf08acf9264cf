/**
 * Schema layer: validation through toolgate's validator vs the same compiled Ajv
 * validator alone (same options), on a valid and an invalid call — goal ≤ 1.2× for the verdict —
 * then what a refusal costs on top (its issues, its text for the model, vs Ajv's errorsText), and the
 * lint time of the whole 117-tool GitHub MCP catalog (no peer).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { lintCatalog, lintTool } from "../src/schema/lint/index.js";
import { renderIssues } from "../src/schema/issue-text.js";
import { createValidator } from "../src/schema/validate.js";
import type { Harness } from "./harness.js";

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => void;

/** The order assistant's search_customer_orders (examples/orders/search.ts), closed and bounded. */
const spec = {
  name: "search_customer_orders",
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      customer_id: { type: "string", maxLength: 64, description: "Customer id." },
      status: { type: "string", enum: ["pending", "shipped", "delivered", "cancelled"], description: "Status filter." },
      since: { type: "string", format: "date", description: "Earliest date, YYYY-MM-DD." },
      limit: { type: "integer", minimum: 1, maximum: 20, default: 20, description: "Orders to return." },
    },
    required: ["customer_id"],
    additionalProperties: false,
  },
};
const valid = { customer_id: "c_7", status: "shipped", since: "2026-03-05", limit: 10 };
const invalid = { customer_id: "c_7", since: "3/5/26", limt: 500 };

export default async function schemaBench(h: Harness): Promise<void> {
  const validator = createValidator();
  // The peer: the same schema compiled by an Ajv with the options toolgate uses.
  const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: false, logger: false, validateSchema: false });
  addFormats(ajv);
  const peer = ajv.compile(spec.inputSchema);
  if (!validator.validate(spec, valid).ok || validator.validate(spec, invalid).ok || !peer(valid) || peer(invalid))
    throw new Error("bench inputs do not have the expected verdicts");

  let sink: unknown;
  const goal = { op: "<=" as const, value: 1.2, label: "≤ 1.2×" };
  await h.compare({
    area: "schema",
    hot_path: "validate valid call",
    toolgate: () => (sink = validator.validate(spec, valid)),
    peer: { name: "Ajv compiled fn", fn: () => (sink = peer(valid)) },
    goal,
    batch: 2000,
  });
  await h.compare({
    area: "schema",
    hot_path: "validate invalid call → verdict only",
    toolgate: () => (sink = validator.validate(spec, invalid)),
    peer: { name: "Ajv compiled fn + errors", fn: () => (sink = peer(invalid) || peer.errors) },
    goal,
    batch: 2000,
    note: "both sides stop at the verdict with Ajv's errors kept; toolgate builds its issues on first read (the next rows pay for that)",
  });
  await h.compare({
    area: "schema",
    hot_path: "validate invalid call + read issues",
    toolgate: () => {
      const r = validator.validate(spec, invalid);
      sink = r.ok ? [] : r.issues;
    },
    peer: { name: "Ajv compiled fn + errors", fn: () => (sink = peer(invalid) || peer.errors) },
    batch: 500,
    note: "no goal: toolgate also builds issues (path, expected, received, example, closest name); Ajv only fills its error array",
  });
  await h.compare({
    area: "schema",
    hot_path: "validate invalid call + issues + text for the model",
    toolgate: () => {
      const r = validator.validate(spec, invalid);
      sink = r.ok ? "" : renderIssues(spec.name, r.issues);
    },
    peer: { name: "Ajv fn + ajv.errorsText", fn: () => (sink = peer(invalid) ? "" : ajv.errorsText(peer.errors)) },
    batch: 500,
    note: "no goal: the text differs (allowed names, closest match, example vs Ajv's schema-path messages)",
  });

  const here = dirname(fileURLToPath(import.meta.url));
  const catalogPath = resolve(here, "..", "..", "shared", "testdata", "mcp-catalogs", "github-mcp-server.json");
  if (!existsSync(catalogPath)) {
    process.stderr.write(`  schema · lint GitHub catalog skipped: ${catalogPath} not found\n`);
    return;
  }
  const tools = (JSON.parse(readFileSync(join(catalogPath), "utf8")) as { tools: unknown[] }).tools;
  await h.compare({
    area: "schema",
    hot_path: `lint GitHub catalog, ${tools.length} tools (per-tool rules)`,
    toolgate: () => (sink = tools.map((t, i) => lintTool(t, i))),
    batch: 1,
    rounds: 10,
    warmup: 2,
  });
  await h.compare({
    area: "schema",
    hot_path: `lintCatalog GitHub, ${tools.length} tools (+ catalog rules)`,
    toolgate: () => (sink = lintCatalog(tools)),
    batch: 1,
    rounds: 10,
    warmup: 2,
  });
  void sink;
}
