/**
 * The command registry: each command lives in `commands/NAME.ts` and exports
 * `register(program)`. Add one import and one entry per command.
 */
import type { Command } from "commander";

export type Register = (program: Command) => void;

export const commands: Register[] = [
  // one entry per command module, e.g. lint.register,
];
