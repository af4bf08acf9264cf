/**
 * The package as it ships, for the benchmarks that run it outside tsx (`mcp.bench.ts`, `serve-loop.ts`):
 * tsx transpiles with esbuild's keepNames, which wraps every closure of the call path in an
 * Object.defineProperty a user of the package never pays.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));

/**
 * Compiles `tree`'s `src/` (default: this checkout's) as `npm run build` does, into a fresh folder under node_modules/.cache (inside
 * the project, so the build resolves the project's dependencies); beside it a copy of
 * package.json, which makes the output ES modules and gives the CLI its version. Type errors
 * of a work in progress do not stop tsc from emitting; a build without the CLI is an error.
 */
export function buildToolgate(tree: string = root): string {
  const cache = join(tree, "node_modules/.cache");
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, "toolgate-bench-"));
  copyFileSync(join(tree, "package.json"), join(dir, "package.json"));
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  process.stderr.write("  mcp · compiling src/ with tsc (tsconfig.build.json) …\n");
  try {
    execFileSync(
      process.execPath,
      [
        tsc,
        "-p",
        join(tree, "tsconfig.build.json"),
        "--outDir",
        join(dir, "dist"),
        "--declaration",
        "false",
        "--sourceMap",
        "false",
      ],
      { stdio: "ignore" },
    );
  } catch {
    // Exit code 2: type errors, files emitted all the same.
  }
  if (!existsSync(join(dir, "dist/cli/main.js"))) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `tsc emitted no dist/cli/main.js from ${tree} for the MCP benchmark; run npm run build there to see why`,
    );
  }
  return join(dir, "dist");
}

/**
 * The command-line arguments (after the CLI's `main.js`) of the two toolgate processes the MCP rows
 * run: `serve` of the no-op catalog in `project`, and `proxy` in front of the bare server `bare`,
 * its store and audit trail in `ws` (`mcp.bench.ts`, `proxy-hop.ts`).
 */
export const toolgateArgs = {
  serve: (project: string) => [
    "serve",
    "--workspace",
    project,
    "--catalog",
    join(root, "test/mcp/fixtures/notes-catalog.ts"),
  ],
  proxy: (ws: string, era: string, bare: string) => [
    "proxy",
    "--store",
    `sqlite:${join(ws, `proxy-${era}.db`)}`,
    "--audit",
    join(ws, `proxy-audit-${era}.jsonl`),
    "--",
    process.execPath,
    bare,
  ],
};
