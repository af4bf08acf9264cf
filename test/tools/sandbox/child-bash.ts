/**
 * A child toolgate for the tests that must run it as another user (see unprivileged.ts): builds
 * the coding catalog over argv[2] (bash limits from the JSON in argv[4], if any) and runs
 * bash_execute with the command in argv[3], printing
 * `{ output, text }` or `{ error: { name, code, message } }` as one JSON line.
 */
import { join } from "node:path";
import { NoEffectError } from "../../../src/core/errors.js";
import { DEFAULT_BASH_LIMITS, executeBash, launcherChooser } from "../../../src/tools/bash.js";
import { createCodingCatalog } from "../../../src/tools/catalog.js";
import { createBubblewrap } from "../../../src/tools/sandbox/bubblewrap.js";
import type { EgressConfig } from "../../../src/tools/sandbox/egress/policy.js";

const [workspace, command, limits] = process.argv.slice(2) as [string, string, string | undefined];
const warnings: string[] = [];
const tools = createCodingCatalog({
  workspace,
  // TG_CHILD_EGRESS (JSON): the catalog's egress configuration, so the proxy runs as this unprivileged toolgate.
  sandbox: {
    warn: (m) => warnings.push(m),
    ...(process.env.TG_CHILD_EGRESS ? { egress: JSON.parse(process.env.TG_CHILD_EGRESS) as EgressConfig } : {}),
  },
  limits: { bash: { max_processes: 64, ...(limits ? (JSON.parse(limits) as object) : {}) } },
});
const bash = tools.find((t) => t.name === "bash_execute")!;
const ctx = {
  signal: new AbortController().signal,
  trajectory_id: "t-child",
  turn: 0,
  call_id: "c",
  now: Date.now,
  budget_tokens: 100_000,
};
// TG_CHILD_READ_ONLY (JSON list, relative to the workspace): the run gets those read-only paths directly.
const readOnly = process.env.TG_CHILD_READ_ONLY
  ? (JSON.parse(process.env.TG_CHILD_READ_ONLY) as string[]).map((p) => join(workspace, p))
  : null;
try {
  const r = (
    readOnly
      ? await executeBash(
          launcherChooser(createBubblewrap({ warn: (m) => warnings.push(m) }), false),
          { root: workspace, hidden: [], readOnly },
          { command, timeout_ms: 30_000 },
          DEFAULT_BASH_LIMITS,
        )
      : await bash.handler({ command, timeout_ms: 30_000 }, ctx)
  ) as { output: unknown; text: string };
  process.stdout.write(JSON.stringify({ output: r.output, text: r.text, warnings }) + "\n");
} catch (err) {
  const e = err as Error;
  process.stdout.write(
    JSON.stringify({
      error: {
        name: e instanceof NoEffectError ? "NoEffectError" : e.name,
        code: (e as NoEffectError).code ?? null,
        message: e.message,
      },
      warnings,
    }) + "\n",
  );
}
