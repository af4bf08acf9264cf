/**
 * file_view and file_edit on an ordinary source file, three folders deep, against the same work
 * done by hand with path-based calls: what the descriptor walk (fs/walk.ts), the bounded read and
 * the checked atomic rename cost. Goal: median ≤ 2 ms each.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { open, readFile, rename, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Harness, Row } from "./harness.js";
import { editFile } from "../src/tools/edit.js";
import { viewPath } from "../src/tools/view.js";
import { openWorkspace } from "../src/tools/workspace.js";

const GOAL_US = 2000;

/** The goal is an absolute median, not a ratio to the peer. */
function withGoal(row: Row): void {
  row.goal = "median ≤ 2 ms";
  row.goal_met = row.toolgate_median_us <= GOAL_US;
}

/** The fixture: a 2,000-line source file three folders deep under `root`; returns its path. */
export function writeFilesFixture(root: string): string {
  const dir = join(root, "src", "tools", "fs");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "module.ts");
  writeFileSync(
    file,
    Array.from({ length: 2000 }, (_, i) => `export const value${i} = compute(${i}); // line ${i + 1}`).join("\n") +
      "\n",
  );
  return file;
}

/** The one line the edit benchmarks change and change back. */
export const EDIT_LINE = { from: "value1234 =", to: "VALUE1234 =" };

export default async function filesBench(h: Harness): Promise<void> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "tg-files-bench-")));
  try {
    const file = writeFilesFixture(root);
    const ws = openWorkspace(root);

    withGoal(
      await h.compare({
        area: "tools",
        hot_path: "file_view 500-line window (lines 501-1000 of a 2,000-line file, 3 folders deep)",
        toolgate: () => viewPath(ws, { path: file, offset: 501, limit: 500 }),
        peer: {
          name: "readFile + split + slice by hand",
          fn: async () => {
            const lines = (await readFile(file, "utf8")).split("\n").slice(500, 1000);
            return lines.map((l, i) => `${501 + i}\t${l}`).join("\n");
          },
        },
        batch: 10,
        rounds: 20,
        warmup: 2,
        note: "toolgate also walks the path by descriptor, hashes the file for its version and counts o200k tokens of the window",
      }),
    );

    let flip = false;
    withGoal(
      await h.compare({
        area: "tools",
        hot_path: "file_edit one line of the same file",
        toolgate: () => {
          flip = !flip;
          return editFile(
            ws,
            flip
              ? { path: file, old_str: EDIT_LINE.from, new_str: EDIT_LINE.to }
              : { path: file, old_str: EDIT_LINE.to, new_str: EDIT_LINE.from },
          );
        },
        peer: {
          name: "readFile + replace + temp write, fsync, rename by hand",
          fn: async () => {
            flip = !flip;
            const text = await readFile(file, "utf8");
            const temp = `${file}.bench.tmp`;
            const handle = await open(temp, "wx");
            try {
              await handle.writeFile(
                flip ? text.replace(EDIT_LINE.from, EDIT_LINE.to) : text.replace(EDIT_LINE.to, EDIT_LINE.from),
              );
              await handle.sync();
            } finally {
              await handle.close();
            }
            await rename(temp, file);
          },
        },
        batch: 5,
        rounds: 20,
        warmup: 2,
        note: "both write a temporary file, fsync and rename; toolgate also walks by descriptor, counts matches, hashes before and after and checks the name still holds the file",
      }),
    );
    if (![EDIT_LINE.from, EDIT_LINE.to].some((line) => readFileSync(file, "utf8").includes(line)))
      throw new Error("the edit benchmark lost its line");
    await writeFile(join(root, "done"), "");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
