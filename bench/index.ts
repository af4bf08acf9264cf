/**
 * `npm run bench [-- FILTER...]`: runs every `bench/*.bench.ts` (or those whose name
 * contains a FILTER), prints progress, then one table, and writes `bench/results.json`.
 * Each bench module's default export receives the shared Harness.
 */
import { readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import os from "node:os";
import { Harness, renderTable } from "./harness.js";

const here = dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => filters.length === 0 || filters.some((q) => f.includes(q)))
  .sort();

const harness = new Harness();
const failures: string[] = [];
for (const file of files) {
  process.stderr.write(`▶ ${file}\n`);
  try {
    const mod = (await import(pathToFileURL(join(here, file)).href)) as { default: (h: Harness) => Promise<void> };
    await mod.default(harness);
  } catch (err) {
    failures.push(`${file}: ${(err as Error).message}`);
    process.stderr.write(`  ✗ ${file} failed: ${(err as Error).stack ?? err}\n`);
  }
}

console.log("\n" + renderTable(harness.rows));
if (failures.length) console.log(`\n${failures.length} benchmark file(s) failed:\n- ${failures.join("\n- ")}`);
const out = join(here, "results.json");
writeFileSync(
  out,
  JSON.stringify(
    {
      date: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      cpu: os.cpus()[0]?.model ?? null,
      rows: harness.rows,
      failures,
    },
    null,
    2,
  ) + "\n",
);
console.log(`\nwritten ${out}`);
process.exitCode = failures.length ? 1 : 0;
