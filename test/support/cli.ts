/** Runs `toolgate` in process and captures what it prints: the one CLI test helper (runCli, not a child process). */
import { vi } from "vitest";
import { runCli } from "../../src/cli/program.js";

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** `cli("lint", "a.json")`: the exit code and everything written to stdout and stderr; `process.exitCode` is reset
 * afterwards. */
export async function cli(...argv: string[]): Promise<CliRun> {
  let out = "";
  let err = "";
  const o = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => ((out += String(chunk)), true));
  const e = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((err += String(chunk)), true));
  try {
    const code = await runCli(argv);
    return { code, out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
    process.exitCode = undefined;
  }
}
