/**
 * The command registry: each command lives in `commands/NAME.ts` and exports
 * `register(program)`. Add one import and one entry per command.
 */
import type { Command } from "commander";
import * as cap from "./commands/cap.js";
import * as lint from "./commands/lint.js";
import * as stats from "./commands/stats.js";
import * as approvals from "./commands/approvals.js";

export type Register = (program: Command) => void;

export const commands: Register[] = [
  // one entry per command module, e.g. lint.register,
  lint.register,
  cap.register,
  stats.register,
  approvals.register,
];
