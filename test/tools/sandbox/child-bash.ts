/**
 * A child toolgate for the tests that must run it as another user (see unprivileged.ts): builds
 * the coding catalog over argv[2] (bash limits from the JSON in argv[4], if any) and runs
 * bash_execute with the command in argv[3], printing
 * `{ output, text }` or `{ error: { name, code, message } }` as one JSON line.
 */
import { NoEffectError } from "../../../src/schema/errors.js";
import { createCodingCatalog } from "../../../src/tools/catalog.js";

const [workspace, command, limits] = process.argv.slice(2) as [string, string, string | undefined];
const warnings: string[] = [];
const tools = createCodingCatalog({ workspace, sandbox: { warn: (m) => warnings.push(m) }, limits: { bash: { max_processes: 64, ...(limits ? (JSON.parse(limits) as object) : {}) } } });
const bash = tools.find((t) => t.name === "bash_execute")!;
const ctx = { signal: new AbortController().signal, trajectory_id: "t-child", turn: 0, call_id: "c", now: Date.now, budget_tokens: 100_000 };
try {
  const r = (await bash.handler({ command, timeout_ms: 30_000 }, ctx)) as { output: unknown; text: string };
  process.stdout.write(JSON.stringify({ output: r.output, text: r.text, warnings }) + "\n");
} catch (err) {
  const e = err as Error;
  process.stdout.write(JSON.stringify({ error: { name: e instanceof NoEffectError ? "NoEffectError" : e.name, code: (e as NoEffectError).code ?? null, message: e.message }, warnings }) + "\n");
}
