/**
 * Vitest global setup: every test run gets its own XDG_STATE_HOME and XDG_CONFIG_HOME, so
 * toolgate's per-user defaults (state under ~/.local/state, keys under ~/.config) land in a
 * temporary folder, never in the home folder of whoever runs the tests. Child processes that a
 * test starts with `process.env` inherit them; removed at the end of the run.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), "toolgate-test-home-"));
  for (const [name, sub] of [
    ["XDG_STATE_HOME", "state"],
    ["XDG_CONFIG_HOME", "config"],
  ] as const) {
    mkdirSync(join(root, sub), { mode: 0o700 });
    process.env[name] = join(root, sub);
  }
  return () => rmSync(root, { recursive: true, force: true });
}
