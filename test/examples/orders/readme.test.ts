/**
 * examples/orders/README.md runs as written: every line of its ```sh blocks, in order, in one
 * bash session from the checkout (so `T=$(…)` and the exports carry), with a fresh HOME. A line
 * must exit 0, or 1 where its comment says "exit 1". `npx toolgate` and the `toolgate` that
 * call.ts starts are this checkout's CLI.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../support/require.js";
import { tempDir } from "../../mcp/support.js";
import { shellExamples } from "../../support/sh-blocks.js";

const tsx = import.meta.resolve("tsx");

describe("examples/orders/README.md: the walkthrough runs as written", { timeout: 600_000 }, () => {
  it("keys, search, the ISO-date refusal, a refund approved from the CLI and replayed, another tenant kept out", () => {
    const home = tempDir("orders-readme-home");
    const bin = join(home, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "toolgate"), `#!/bin/sh\nexec node --import "$TSX" "$MAIN" "$@"\n`);
    chmodSync(join(bin, "toolgate"), 0o755);
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      HOME: home,
      TSX: tsx,
      MAIN: join(projectRoot, "src/cli/main.ts"),
      PATH: `${bin}:${process.env.PATH}`,
    };
    delete env.XDG_STATE_HOME;
    delete env.XDG_CONFIG_HOME;
    delete env.TOOLGATE_KEYS;
    delete env.ORDERS_DB;
    const lines = shellExamples(join(projectRoot, "examples/orders/README.md")).flat();
    expect(lines.length).toBeGreaterThan(10);
    const script = [
      `npx() { if [ "$1" = toolgate ]; then shift; toolgate "$@"; else command npx "$@"; fi; }`,
      `check() { local rc=$1 allowed=$2 line=$3; case " $allowed " in *" $rc "*) ;; *) echo "README.md:$line exited $rc" >&2; exit 1;; esac; }`,
      ...lines.map((l) => `${l.command}\ncheck $? "${/exit 1/.test(l.comment) ? "1" : "0"}" ${l.line}`),
    ].join("\n");
    const run = spawnSync("bash", ["-c", script], { cwd: projectRoot, env, encoding: "utf8", timeout: 500_000 });
    expect(run.stderr).not.toMatch(/README\.md:\d+ exited/);
    expect(run.status, run.stderr).toBe(0);
    const out = run.stdout;
    expect(out).toContain("20 of 143 orders of c_7, newest first");
    expect(out).toContain("- since must be YYYY-MM-DD; received 2026-2-3; example 2026-03-05");
    expect(out).toContain("1250 (12.50) remains; received 2000; example 1250");
    expect(out).toMatch(
      /refund r_[0-9a-f]{10} of 12\.50 issued on order o_1; refundable balance now 0\.00; order version 7/,
    );
    expect(out).toContain("replayed: this call already ran");
    expect(out).toContain("- order_id not found; search_customer_orders lists a customer's orders; received o_1");
    expect(out).toContain("unbounded / search text:");
  });
});
