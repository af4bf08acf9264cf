/**
 * The command registry: each command lives in `commands/NAME.ts` and exports
 * `register(program)`. Add one entry per command. A module is imported only when its command
 * runs (or for the full help), so `toolgate --version` and `toolgate lint FILE` do not load the
 * gateway, the stores, the MCP SDK and the tokenizer that other commands need.
 */
import type { Command } from "commander";

export type Register = (program: Command) => void;

export interface CommandEntry {
  name: string;
  load: () => Promise<{ register: Register }>;
}

export const commands: CommandEntry[] = [
  { name: "lint", load: () => import("./commands/lint.js") },
  { name: "cap", load: () => import("./commands/cap.js") },
  { name: "records", load: () => import("./commands/records.js") },
  { name: "serve", load: () => import("./commands/serve.js") },
  { name: "proxy", load: () => import("./commands/proxy.js") },
  { name: "breakeven", load: () => import("./commands/breakeven.js") },
  { name: "cost", load: () => import("./commands/cost.js") },
  { name: "export", load: () => import("./commands/export.js") },
  { name: "stats", load: () => import("./commands/stats.js") },
  { name: "approvals", load: () => import("./commands/approvals.js") },
  { name: "pins", load: () => import("./commands/pins.js") },
];

/**
 * The commands `argv` needs: the one it names; none for `--version` alone; every one otherwise
 * (`--help`, `help`, no arguments, an unknown name: the help and the error list them all).
 */
export function commandsFor(argv: readonly string[]): CommandEntry[] {
  const first = argv[0];
  const named = first === undefined ? undefined : commands.find((c) => c.name === first);
  if (named) return [named];
  if (argv.length === 1 && (first === "--version" || first === "-V")) return [];
  return commands;
}
