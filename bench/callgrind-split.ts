/**
 * A callgrind dump's instructions split three ways: V8's compilers (TurboFan's CompileOptimized, lazy
 * and baseline compiles, Maglev), its garbage collector (a collection, an incremental-marking or
 * scavenge job) and the rest, which is the code that ran. After a warm-up of a few thousand calls
 * under `--single-threaded`, compiles still fall inside the counted window (about half of it on
 * 2026-12-04) and a major collection falls in one run's window and not the next, so totals of two
 * trees differ by more than any change between them; the rest is what an A/B compares. Read from
 * `callgrind_annotate --inclusive=yes` (each part the largest inclusive count of its entry points,
 * a recursive entry counted once).
 */
import { execFileSync } from "node:child_process";

const PARTS = {
  compile: [
    "v8::internal::Runtime_CompileOptimized(",
    "v8::internal::Runtime_CompileLazy(",
    "v8::internal::Runtime_CompileBaseline",
    "BaselineBatchCompiler::CompileBatch(",
    "maglev::MaglevCompiler::Compile(",
  ],
  gc: [
    "v8::internal::Heap::CollectGarbage(",
    "v8::internal::IncrementalMarkingJob::Task::RunInternal(",
    "v8::internal::ScavengeJob::Task::RunInternal(",
    "v8::internal::MinorGCJob::Task::RunInternal(",
  ],
};

export interface CallgrindSplit {
  total: number;
  compile: number;
  gc: number;
  rest: number;
}

/** The dump's instructions, each part divided by `calls`. */
export function callgrindSplit(dump: string, calls: number): CallgrindSplit {
  const text = execFileSync("callgrind_annotate", ["--inclusive=yes", "--threshold=100", dump], {
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  const rows = [...text.matchAll(/^\s*([\d,]+) \([^)]*\)\s+\S*?:(.*)$/gm)].map((m) => ({
    ir: Number(m[1]!.replaceAll(",", "")),
    name: m[2]!,
  }));
  const total = Number(/^([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS/m.exec(text)?.[1]?.replaceAll(",", "") ?? NaN);
  // A name callgrind suffixes with 'N is the same function entered recursively: counted once, unsuffixed.
  const part = (entries: string[]) =>
    entries.reduce(
      (sum, entry) =>
        sum + Math.max(0, ...rows.filter((r) => r.name.startsWith(entry) && !/'\d+ \[/.test(r.name)).map((r) => r.ir)),
      0,
    );
  const compile = part(PARTS.compile);
  const gc = part(PARTS.gc);
  return { total: total / calls, compile: compile / calls, gc: gc / calls, rest: (total - compile - gc) / calls };
}
