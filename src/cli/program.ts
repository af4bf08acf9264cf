import { Command, CommanderError } from "commander";
import { readFileSync } from "node:fs";
import { commands, commandsFor } from "./commands.js";
import { EXIT, reportError } from "./io.js";

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

/**
 * Builds the `toolgate` program with the commands `argv` needs (`commands.ts` `commandsFor`;
 * without `argv`, all of them); exported so tests can run commands in process.
 */
export async function buildProgram(argv?: readonly string[]): Promise<Command> {
  const program = new Command("toolgate")
    .description("The boundary between an LLM agent and the tools it calls.")
    .version(version())
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  const needed = argv === undefined ? commands : commandsFor(argv);
  for (const { register } of await Promise.all(needed.map((c) => c.load()))) register(program);
  return program;
}

/** Runs the CLI with `argv` (without node and script); resolves to the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const program = await buildProgram(argv);
  process.exitCode = undefined;
  try {
    await program.parseAsync(argv, { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit through here with code 0; usage errors with 1 → 2.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    return reportError(err);
  }
}
