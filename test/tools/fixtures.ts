/** A fresh workspace per test file under the OS temp dir, with a sibling "outside" folder. */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realpathSync } from "node:fs";
import { expect } from "vitest";
import { NoEffectError } from "../../src/core/errors.js";
import { openWorkspace, type Workspace } from "../../src/tools/workspace.js";

export interface Sandbox {
  /** Parent folder holding `ws` and `outside`. */
  base: string;
  root: string;
  outside: string;
  ws: Workspace;
  write(rel: string, content: string | Buffer): string;
  cleanup(): void;
}

export function makeWorkspace(prefix: string): Sandbox {
  const base = realpathSync(mkdtempSync(join(tmpdir(), `tg-tools-${prefix}-`)));
  const root = join(base, "ws");
  const outside = join(base, "outside");
  mkdirSync(root);
  mkdirSync(outside);
  return {
    base,
    root,
    outside,
    ws: openWorkspace(root),
    write(rel, content) {
      const p = join(root, rel);
      mkdirSync(join(p, ".."), { recursive: true });
      writeFileSync(p, content);
      return p;
    },
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** Replaces the per-run temp folder in a message with a stable name for inline snapshots. */
export function stable(text: string, s: Sandbox): string {
  return text.replaceAll(s.base, "<tmp>");
}

/** Awaits a refusal: it must be a NoEffectError (the edit did not happen); returns "code: message" with stable paths.
 * */
export async function refusalText(p: Promise<unknown>, s: Sandbox): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NoEffectError);
  return `${(err as NoEffectError).code}: ${stable((err as Error).message, s)}`;
}
