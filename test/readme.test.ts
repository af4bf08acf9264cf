/**
 * Every shell example in README.md runs as written: each ```sh block is run, line by line in
 * one bash session (so `T=$(…)` carries to the next line), in a fresh workspace with its own HOME,
 * after state was made there the way it would be by using toolgate (serve ran, a call was held
 * for approval, a write is in doubt). A command must exit 0, or 1 where its comment says so
 * ("exit 1", "1 errors", "1 denied"); 2 — a usage or input error — fails the test with the line.
 *
 * The README writes synopses; they become commands by fixed rules, never by hand: an optional
 * `[…]` is left out, `a|b` takes the first choice, and the placeholders take values the setup
 * made (`KEY` a record's key, `ap_…` a pending approval, `cap_…` the id of the grant `$T`,
 * `catalog.json`/`more.json`/`other.json` and `./my-tools.ts` files in the workspace, `curl -s …`
 * a `cat` of catalog.json, the upstream `npx @modelcontextprotocol/server-memory` the installed
 * package, so nothing is downloaded). `npx toolgate` is this checkout's CLI; `toolgate serve`,
 * which runs until its client leaves, is started, waited for and stopped with SIGTERM (exit 0);
 * `npm test` is this suite and is not run again.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGateway } from "../src/runtime/gateway.js";
import { openStore } from "../src/idempotency/open.js";
import { runOnce } from "../src/idempotency/run-once.js";
import { defineTool } from "../src/schema/define.js";
import { defaultStateDir } from "../src/state/location.js";
import { projectRoot } from "./support/require.js";
import { tempDir } from "./mcp/support.js";
import { concrete, shellExamples } from "./support/sh-blocks.js";

const memoryServer = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-memory/dist/index.js"));
const tsx = import.meta.resolve("tsx");

const PRELUDE = String.raw`
set -o pipefail
npx() { if [ "$1" = toolgate ]; then shift; node --import "$TSX" "$MAIN" "$@"; else command npx "$@"; fi; }
# A server runs until its client leaves: start it, wait for its start line, stop it with SIGTERM.
start_stop() {
  local log; log=$(mktemp)
  exec 3< <(exec sleep 300); local holder=$!
  [ "$1 $2" = "npx toolgate" ] || return 2; shift 2
  node --import "$TSX" "$MAIN" "$@" <&3 2>"$log" & local pid=$!
  exec 3<&-
  for _ in $(seq 1 600); do grep -Eq " on (stdio|http://)" "$log" && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if ! grep -Eq " on (stdio|http://)" "$log"; then cat "$log" >&2; kill "$pid" "$holder" 2>/dev/null; return 2; fi
  kill -TERM "$pid"; wait "$pid"; local rc=$?
  kill "$holder" 2>/dev/null
  cat "$log" >&2
  return $rc
}
check() { local rc=$1 allowed=$2 line=$3; case " $allowed " in *" $rc "*) ;; *) echo "README.md:$line exited $rc" >&2; exit 1;; esac; }
`;

const catalogTool = (name: string) => ({
  name,
  description: `Find at most 20 newest orders of one customer (${name}).`,
  inputSchema: {
    type: "object",
    properties: { customer_id: { type: "string", maxLength: 64, description: "Customer id, e.g. c_7." } },
    required: ["customer_id"],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true },
});

describe("README.md: every shell example runs as written", { timeout: 600_000 }, () => {
  it("runs each block in a fresh workspace with the state using toolgate makes", async () => {
    const ws = tempDir("readme-ws");
    const home = tempDir("readme-home");
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      HOME: home,
      TSX: tsx,
      MAIN: join(projectRoot, "src/cli/main.ts"),
    };
    delete env.XDG_STATE_HOME;
    delete env.XDG_CONFIG_HOME;
    delete env.TOOLGATE_KEYS;
    const bash = (script: string) =>
      spawnSync("bash", ["-c", PRELUDE + script], { cwd: ws, env, encoding: "utf8", timeout: 300_000 });

    // Using toolgate: serve ran in the workspace (its state folder and store exist) …
    const first = bash("start_stop npx toolgate serve");
    expect([first.status, first.stderr]).toEqual([0, expect.stringContaining("on stdio")]);
    // … a destructive call was held for approval twice, with an audit trail, and a write is in doubt.
    const state = defaultStateDir(ws, env);
    const store = await openStore(`sqlite:${join(state, "state.db")}`);
    const refund = defineTool({
      name: "refund_order",
      description: "Refunds one order in full; the money leaves at once.",
      input: z.object({ order: z.string().max(20).describe("Order id, e.g. o_1.") }),
      effect: "destructive",
      handler: () => ({ refunded: true }),
    });
    const gateway = createGateway({ tools: [refund], store, audit: join(state, "audit.jsonl") });
    const approvals: string[] = [];
    for (const order of ["o_1", "o_2"]) {
      const obs = await gateway.call({
        trajectory_id: "readme",
        turn: 1,
        call_id: `c-${order}`,
        tool: "refund_order",
        arguments: { order },
      });
      approvals.push(String(obs.error?.detail?.approval_id));
    }
    for (const key of ["k-doubt-1", "k-doubt-2"])
      await runOnce(store, key, () => Promise.reject(new Error("connection reset")), {
        lease_ms: 60_000,
        tool: "refund_order",
      });
    await gateway.close();

    for (const name of ["catalog.json", "more.json", "other.json"])
      writeFileSync(join(ws, name), JSON.stringify({ tools: [catalogTool(name.replace(".json", "_orders"))] }));
    writeFileSync(
      join(ws, "my-tools.ts"),
      `export const shout = { name: "shout", description: "Returns its text in capitals.", effect: "read", annotations: {}, handler: (a: { text: string }) => ({ text: a.text.toUpperCase() }),
         inputSchema: { type: "object", properties: { text: { type: "string", maxLength: 100, description: "Text to shout." } }, required: ["text"], additionalProperties: false } };\n`,
    );

    const queues: Record<string, string[]> = { KEY: ["k-doubt-1", "k-doubt-1", "k-doubt-2"], "ap_…": approvals };
    const ran: string[] = [];
    for (const block of shellExamples(join(projectRoot, "README.md"))) {
      const script: string[] = [];
      for (const { line, command, comment } of block) {
        if (command === "npm test") continue; // this suite
        let c = concrete(command)
          .replace("curl -s …", "cat catalog.json")
          .replace("npx @modelcontextprotocol/server-memory", `node ${memoryServer}`)
          .replace(
            "cap_…",
            `"$(npx toolgate cap inspect "$T" --json | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).grant.id')"`,
          );
        for (const [placeholder, values] of Object.entries(queues))
          while (c.includes(placeholder)) c = c.replace(placeholder, values.shift()!);
        if (/^npx toolgate serve\b/.test(c)) c = `start_stop ${c}`;
        const allowed = /\bexit 1\b|\b1 (errors|denied)\b/.test(comment) ? "0 1" : "0";
        script.push(`${c} >/dev/null; check $? "${allowed}" ${line}`);
        ran.push(c);
      }
      const r = bash(script.join("\n"));
      expect(r.status, `${r.stderr}\n--- script ---\n${script.join("\n")}`).toBe(0);
    }
    // Every example ran but the test suite: the rules above left nothing out.
    expect(ran.length).toBe(
      shellExamples(join(projectRoot, "README.md"))
        .flat()
        .filter((e) => e.command !== "npm test").length,
    );
    expect(ran.filter((c) => /[[\]…]|\bKEY\b/.test(c.replace(/"\$\(.*\)"/, "")))).toEqual([]);
  });
});
