/**
 * The command registry: each command lives in `commands/NAME.ts` and exports
 * `register(program)`. Add one import and one entry per command.
 */
import type { Command } from "commander";
import * as breakeven from "./commands/breakeven.js";
import * as cap from "./commands/cap.js";
import * as cost from "./commands/cost.js";
import * as exportCmd from "./commands/export.js";
import * as lint from "./commands/lint.js";
import * as records from "./commands/records.js";
import * as proxy from "./commands/proxy.js";
import * as serve from "./commands/serve.js";
import * as stats from "./commands/stats.js";
import * as approvals from "./commands/approvals.js";

export type Register = (program: Command) => void;

export const commands: Register[] = [
  // one entry per command module, e.g. lint.register,
  lint.register,
  cap.register,
  records.register,
  serve.register,
  proxy.register,
  breakeven.register,
  cost.register,
  exportCmd.register,
  stats.register,
  approvals.register,
];
