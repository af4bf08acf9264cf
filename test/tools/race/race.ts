/**
 * A bounded race between the file tools and a process that swaps a workspace folder with
 * something else (a symlink out of the workspace, a symlink into `.toolgate/`, or `.toolgate/`
 * itself) in a loop. It counts escapes: a window or search page showing text that lives outside
 * the workspace or in its hidden state, and any change made there by file_edit.
 *
 * Run in the test process, or as a script (`node --import tsx race.ts '<json RaceConfig[]>'`
 * prints the RaceReports as JSON) so it can run under another uid.
 */
import { spawn } from "node:child_process";
import {
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { NoEffectError } from "../../../src/core/errors.js";
import { editFile } from "../../../src/tools/edit.js";
import { grepSearch } from "../../../src/tools/grep.js";
import { viewPath } from "../../../src/tools/view.js";
import { openWorkspace } from "../../../src/tools/workspace.js";

export type Scenario =
  /** ws/d (a real folder) exchanged with ws/alt, a symlink to a folder outside the workspace. */
  | "symlink-outside"
  /** ws/d exchanged with ws/alt, a relative symlink to ws/.toolgate. */
  | "symlink-hidden"
  /** ws/d exchanged with ws/.toolgate itself (two real folders). */
  | "hidden-folder";

export interface RaceConfig {
  /** An empty folder the race lays its workspace in (the caller removes it). */
  base: string;
  scenario: Scenario;
  tool: "file_view" | "file_edit" | "grep_search";
  /** Tool calls to make while the swapper runs. */
  calls: number;
  /** The race stops after this long even if not every call was made. */
  max_ms: number;
  /** How the swapper swaps (see swap.py). Default exchange. */
  mode?: "exchange" | "rename";
}

export interface RaceReport {
  calls: number;
  swaps: number;
  /** One line per escape seen (empty when the envelope held). */
  escapes: string[];
  /** How the calls ended: "ok", or the NoEffectError code, or "error: message". */
  outcomes: Record<string, number>;
}

const INSIDE = "INSIDE-TEXT";
const OUTSIDE = "OUTSIDE-SECRET";
const HIDDEN = "HIDDEN-STATE";
const here = dirname(fileURLToPath(import.meta.url));

export async function runRace(config: RaceConfig): Promise<RaceReport> {
  const root = join(config.base, "ws");
  const outside = join(config.base, "outside");
  const hidden = join(root, ".toolgate");
  for (const dir of [join(root, "d"), outside, hidden]) mkdirSync(dir, { recursive: true });
  const body = (token: string) => `${token}\nstate=0\n`;
  writeFileSync(join(root, "d", "f.txt"), body(INSIDE));
  writeFileSync(join(outside, "f.txt"), body(OUTSIDE));
  writeFileSync(join(hidden, "f.txt"), body(HIDDEN));
  const other = config.scenario === "hidden-folder" ? hidden : join(root, "alt");
  if (config.scenario === "symlink-outside") symlinkSync(outside, other);
  if (config.scenario === "symlink-hidden") symlinkSync(".toolgate", other);

  const ws = openWorkspace(root);
  const target = join(root, "d", "f.txt");
  // What must never change: the folders outside the workspace and of its state, held open and
  // read through their descriptors (in the hidden-folder scenario .toolgate/ moves between names).
  const guarded = [outside, hidden].map((dir) => ({
    at: `/proc/self/fd/${openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY)}`,
    token: dir === outside ? OUTSIDE : HIDDEN,
  }));
  const snapshot = () =>
    guarded
      .map(
        ({ at }) =>
          `${readdirSync(at).sort().join(",")}|${readFileSync(join(at, "f.txt"), "utf8")}|${statSync(join(at, "f.txt")).ino}`,
      )
      .join("\n");
  let before = snapshot();
  const closeGuards = () => guarded.forEach(({ at }) => closeSync(Number(at.slice("/proc/self/fd/".length))));

  const swapper = spawn("python3", [join(here, "swap.py"), join(root, "d"), other, config.mode ?? "exchange"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let printed = "";
  swapper.stdout.on("data", (c: Buffer) => (printed += c.toString()));
  const exited = new Promise<number>((done) => swapper.on("close", (code) => done(code ?? -1)));
  while (!printed.includes("ready\n")) await new Promise((r) => setTimeout(r, 5));

  const escapes: string[] = [];
  const outcomes: Record<string, number> = {};
  const leaked = (text: string) => text.includes(OUTSIDE) || text.includes(HIDDEN);
  const started = Date.now();
  let calls = 0;
  for (; calls < config.calls && Date.now() - started < config.max_ms; calls++) {
    let outcome = "ok";
    try {
      if (config.tool === "file_view") {
        const r = await viewPath(ws, { path: target, offset: 1, limit: 10 });
        if (leaked(JSON.stringify(r.output)))
          escapes.push(`call ${calls}: file_view showed ${JSON.stringify(r.output.content)}`);
      } else if (config.tool === "grep_search") {
        const r = await grepSearch(ws, { pattern: "TEXT|SECRET|STATE", path: join(root, "d") });
        if (leaked(JSON.stringify(r.output)))
          escapes.push(`call ${calls}: grep_search found ${JSON.stringify(r.output.matches)}`);
      } else {
        // Toggle state=0 ⇄ state=1 in whichever file the tool reaches.
        await editFile(ws, { path: target, old_str: "state=0", new_str: "state=1" }).catch(async (err: unknown) => {
          if (err instanceof NoEffectError && err.code === "no_match")
            return editFile(ws, { path: target, old_str: "state=1", new_str: "state=0" });
          throw err;
        });
      }
    } catch (err) {
      outcome =
        err instanceof NoEffectError ? err.code : `error: ${(err as Error).message.replaceAll(config.base, "<base>")}`;
    }
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    if (config.tool === "file_edit") {
      const now = snapshot();
      if (now !== before) {
        escapes.push(
          `call ${calls}: file_edit changed what lies outside the workspace or in .toolgate: ${now.replaceAll(config.base, "<base>")}`,
        );
        // Put it back, so later escapes are counted too.
        for (const { at, token } of guarded) {
          writeFileSync(join(at, "f.txt"), body(token));
          for (const f of readdirSync(at)) if (f !== "f.txt") unlinkSync(join(at, f));
        }
        before = snapshot();
      }
    }
  }
  closeGuards();
  swapper.kill("SIGTERM");
  const code = await exited;
  if (code !== 0) throw new Error(`the swapper exited with ${code}: ${printed}`);
  const swaps = Number(printed.trim().split("\n").at(-1));
  return { calls, swaps, escapes, outcomes };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const reports: RaceReport[] = [];
  for (const config of JSON.parse(process.argv[2]!) as RaceConfig[]) reports.push(await runRace(config));
  process.stdout.write(JSON.stringify(reports) + "\n");
}
