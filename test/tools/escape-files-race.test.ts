/**
 * The escape suite, file tools under a concurrent change of the tree: a process swaps the
 * folder a path goes through with a symlink out of the workspace, with a symlink into
 * `.toolgate/`, or with `.toolgate/` itself, as fast as it can, while file_view and file_edit
 * work on a file in that folder. Every race is bounded (calls and time) and must find no escape:
 * no window showing text from outside or from the state, no change made there. Run as root (as
 * CI runs) and as an unprivileged user (a child process under setpriv).
 */
import { spawnSync } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { binaryAvailable, projectRoot } from "../support/require.js";
import { runRace, type RaceConfig, type RaceReport, type Scenario } from "./race/race.js";

const CALLS = 2000;
const MAX_MS = 30_000;
const bases: string[] = [];
afterAll(() => bases.forEach((b) => rmSync(b, { recursive: true, force: true })));
const freshBase = () => {
  const b = mkdtempSync(join(tmpdir(), "tg-race-"));
  bases.push(b);
  return b;
};

const scenarios: Scenario[] = ["symlink-outside", "symlink-hidden", "hidden-folder"];
const tools = ["file_view", "file_edit"] as const;
const ready = binaryAvailable("python3");

/** What a report must show: the race ran (calls made, swaps made) and nothing escaped. */
function expectHeld(report: RaceReport, what: string) {
  expect(report.calls, what).toBeGreaterThan(0);
  expect(report.swaps, what).toBeGreaterThan(0);
  expect(report.escapes, `${what}: ${JSON.stringify(report.outcomes)}`).toEqual([]);
}

describe.runIf(ready)("file tools under a concurrent symlink swap, as root", () => {
  for (const scenario of scenarios) {
    for (const tool of tools) {
      it(
        `${tool}, ${scenario}: ${CALLS} calls against renameat2(RENAME_EXCHANGE) in a loop, no escape`,
        { timeout: MAX_MS + 30_000 },
        async () => {
          expectHeld(
            await runRace({ base: freshBase(), scenario, tool, calls: CALLS, max_ms: MAX_MS }),
            `${tool} ${scenario}`,
          );
        },
      );
    }
  }

  it(
    "file_edit whose folder is swapped for a symlink into .toolgate/ by plain renames never writes there",
    { timeout: MAX_MS + 30_000 },
    async () => {
      expectHeld(
        await runRace({
          base: freshBase(),
          scenario: "symlink-hidden",
          tool: "file_edit",
          calls: CALLS,
          max_ms: MAX_MS,
          mode: "rename",
        }),
        "rename mode",
      );
    },
  );
});

// As root, the race drops to uid 65534 through setpriv; a run that is already unprivileged races as itself.
const asRoot = process.getuid?.() === 0;
const RACER = asRoot ? 65534 : process.getuid?.();
const unprivilegedReady = ready && (!asRoot || binaryAvailable("setpriv", ["--version"]));

describe.runIf(unprivilegedReady)("file tools under a concurrent symlink swap, as an unprivileged user", () => {
  it(
    `file_view and file_edit, every scenario, ${CALLS} calls each under uid ${RACER}: no escape`,
    { timeout: 6 * (MAX_MS + 10_000) },
    () => {
      const configs: RaceConfig[] = scenarios.flatMap((scenario) =>
        tools.map((tool) => {
          const base = freshBase();
          if (asRoot) chownSync(base, 65534, 65534);
          return { base, scenario, tool, calls: CALLS, max_ms: MAX_MS };
        }),
      );
      const race = [
        process.execPath,
        "--import",
        "tsx",
        join(projectRoot, "test/tools/race/race.ts"),
        JSON.stringify(configs),
      ];
      const [command, ...args] = asRoot
        ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ...race]
        : race;
      const child = spawnSync(command!, args, {
        cwd: projectRoot,
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp", TMPDIR: tmpdir() },
      });
      expect(child.status, child.stderr).toBe(0);
      const reports = JSON.parse(child.stdout) as RaceReport[];
      expect(reports).toHaveLength(configs.length);
      reports.forEach((r, i) => expectHeld(r, `${configs[i]!.tool} ${configs[i]!.scenario} as uid ${RACER}`));
    },
  );
});
