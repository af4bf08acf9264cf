/**
 * Optional, not part of `npm run bench` (it needs a second checkout): file_view of a 500-line
 * window and a one-line file_edit, this tree's implementation against an older checkout's, in
 * one process with alternating batches (bench/harness.ts), so machine load hits both alike.
 *
 *   git worktree add --detach ../toolgate-old <commit>
 *   ln -s "$PWD/node_modules" ../toolgate-old/node_modules
 *   npx tsx bench/files-vs-before.ts ../toolgate-old
 *
 * The older checkout's src/tools/view.ts, edit.ts and workspace.ts are imported by absolute path
 * (tsx compiles them with this tree's node_modules) and called as this tree's are, with their
 * defaults and no gateway around them. Each side gets its own copy of the files.bench.ts fixture.
 * Ratio = this tree ÷ the older checkout (lower is faster). Prints the table, then one JSON line
 * (medians, ratios, load average before and after) for collecting repeated runs.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Harness, renderTable, type Row } from "./harness.js";
import { EDIT_LINE, writeFilesFixture } from "./files.bench.js";
import { editFile } from "../src/tools/edit.js";
import { viewPath } from "../src/tools/view.js";
import { openWorkspace } from "../src/tools/workspace.js";

/** What the bench calls on either side: the three entry points by the names both trees export. */
interface FileTools {
  openWorkspace(root: string): unknown;
  viewPath(
    ws: unknown,
    args: { path: string; offset: number; limit: number },
  ): Promise<{ output: Record<string, unknown> }>;
  editFile(ws: unknown, args: { path: string; old_str: string; new_str: string }): Promise<unknown>;
}

const here = dirname(fileURLToPath(import.meta.url));
const usage =
  "usage: npx tsx bench/files-vs-before.ts <older checkout>, e.g. a `git worktree add --detach ../toolgate-old <commit>` with node_modules linked in";

async function loadOlder(dir: string): Promise<FileTools> {
  const tools = join(dir, "src", "tools");
  const found: Record<string, unknown> = {};
  for (const [file, name] of [
    ["workspace.ts", "openWorkspace"],
    ["view.ts", "viewPath"],
    ["edit.ts", "editFile"],
  ] as const) {
    const path = join(tools, file);
    if (!existsSync(path))
      throw new Error(
        `${path} does not exist; the older checkout must be a toolgate tree with src/tools/${file}. ${usage}`,
      );
    const fn = ((await import(pathToFileURL(path).href)) as Record<string, unknown>)[name];
    if (typeof fn !== "function")
      throw new Error(
        `${path} exports no function ${name} (found ${typeof fn}); this bench compares trees that both have it`,
      );
    found[name] = fn;
  }
  return found as unknown as FileTools;
}

function describeCheckout(dir: string): string {
  try {
    return execFileSync("git", ["-C", dir, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return dir;
  }
}

const arg = process.argv[2];
if (arg === undefined) throw new Error(`the older checkout is missing. ${usage}`);
const olderDir = realpathSync(resolve(arg));
if (olderDir === realpathSync(join(here, "..")))
  throw new Error(`${olderDir} is this tree; pass a checkout of an older commit. ${usage}`);
if (!existsSync(join(olderDir, "src", "tools")))
  throw new Error(`${olderDir}/src/tools does not exist; pass the root of a toolgate checkout. ${usage}`);
if (!existsSync(join(olderDir, "node_modules")))
  throw new Error(
    `${olderDir}/node_modules does not exist; link this tree's in: ln -s "${realpathSync(join(here, "..", "node_modules"))}" "${olderDir}/node_modules"`,
  );

const older = await loadOlder(olderDir);
const current: FileTools = { openWorkspace, viewPath, editFile } as unknown as FileTools;
const olderName = describeCheckout(olderDir);
const currentName = describeCheckout(join(here, ".."));

const loadBefore = loadavg();
const roots: string[] = [];
const side = (tools: FileTools) => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "tg-files-vs-before-")));
  roots.push(root);
  const file = writeFilesFixture(root);
  const ws = tools.openWorkspace(root);
  let flip = false;
  return {
    file,
    view: () => tools.viewPath(ws, { path: file, offset: 501, limit: 500 }),
    edit: () => {
      flip = !flip;
      return tools.editFile(
        ws,
        flip
          ? { path: file, old_str: EDIT_LINE.from, new_str: EDIT_LINE.to }
          : { path: file, old_str: EDIT_LINE.to, new_str: EDIT_LINE.from },
      );
    },
  };
};

const h = new Harness();
try {
  const ours = side(current);
  const theirs = side(older);
  // Both must show the same window, or the comparison is not of the same work.
  const [a, b] = [(await ours.view()).output, (await theirs.view()).output];
  for (const key of ["first_line", "last_line", "total_lines", "content"]) {
    if (a[key] !== b[key])
      throw new Error(
        `the two trees' file_view windows differ in ${key} (${String(a[key]).slice(0, 80)} vs ${String(b[key]).slice(0, 80)})`,
      );
  }
  const peer = (fn: () => unknown) => ({ name: `${olderName} (older tree)`, fn });
  await h.compare({
    area: "files",
    hot_path: `file_view 500-line window, ${currentName} vs ${olderName}`,
    toolgate: ours.view,
    peer: peer(theirs.view),
    batch: 10,
    rounds: 30,
    warmup: 3,
  });
  await h.compare({
    area: "files",
    hot_path: `file_edit one line, ${currentName} vs ${olderName}`,
    toolgate: ours.edit,
    peer: peer(theirs.edit),
    batch: 5,
    rounds: 30,
    warmup: 3,
  });
  for (const { file } of [ours, theirs]) {
    if (![EDIT_LINE.from, EDIT_LINE.to].some((line) => readFileSync(file, "utf8").includes(line)))
      throw new Error(`the edit benchmark lost its line in ${file}`);
  }
} finally {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
}
const loadAfter = loadavg();

console.log("\n" + renderTable(h.rows));
const figure = (r: Row) => ({
  hot_path: r.hot_path,
  current_us: r.toolgate_median_us,
  older_us: r.peer_median_us,
  ratio: r.ratio,
});
console.log(
  JSON.stringify({
    current: currentName,
    older: olderName,
    node: process.version,
    load: { before: loadBefore, after: loadAfter },
    rows: h.rows.map(figure),
  }),
);
