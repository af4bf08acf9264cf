/** Runs one command module in process with stdout captured (without loading the other commands). */
import { Command } from "commander";
import { vi } from "vitest";

export async function runCommand(
  register: (p: Command) => void,
  argv: string[],
): Promise<{ stdout: string; error: Error | null }> {
  const program = new Command("toolgate").exitOverride();
  register(program);
  let stdout = "";
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  try {
    await program.parseAsync(argv, { from: "user" });
    return { stdout, error: null };
  } catch (err) {
    return { stdout, error: err as Error };
  } finally {
    spy.mockRestore();
  }
}
