/**
 * The README's framework snippets are meant to be pasted: each ```ts block of its "Inside agent
 * frameworks" section type-checks against the installed frameworks and toolgate's entries, with
 * only the names a reader supplies declared (the gateway, the model, ids, a prompt for a person).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../support/require.js";

const PREAMBLE = `import type { Gateway } from "toolgate";
declare const gateway: Gateway;
declare const capability: string;
declare const chatId: string, runId: string, threadId: string, conversationId: string, userId: string;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const model: any, messages: any[];
declare function askPerson(what: unknown): Promise<boolean>;
export {};
`;

function snippets(): string[] {
  const readme = readFileSync(join(projectRoot, "README.md"), "utf8");
  const start = readme.indexOf("### Inside agent frameworks");
  const end = readme.indexOf("\n### ", start + 1);
  const section = readme.slice(start, end);
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

describe("the README's framework snippets", () => {
  it("are four, each at most 15 lines of code", () => {
    const blocks = snippets();
    expect(blocks).toHaveLength(4);
    for (const b of blocks) expect(b.trimEnd().split("\n").length).toBeLessThanOrEqual(15);
  });

  it("type-check as written against the installed frameworks", () => {
    const dir = mkdtempSync(join(projectRoot, "test", "adapters", ".snippets-"));
    try {
      const files = snippets().map((code, i) => {
        const name = `snippet-${i}.ts`;
        // Imports first, as a reader's file has them, then the names the reader supplies.
        const lines = code.split("\n");
        const imports = lines.filter((l) => l.startsWith("import "));
        const body = lines.filter((l) => !l.startsWith("import "));
        writeFileSync(join(dir, name), [...imports, PREAMBLE, ...body].join("\n"));
        return name;
      });
      writeFileSync(
        join(dir, "tsconfig.json"),
        JSON.stringify({ extends: "../../../tsconfig.json", compilerOptions: { noEmit: true }, include: files }),
      );
      const tsc = join(projectRoot, "node_modules/typescript/bin/tsc");
      const r = spawnSync(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")], { encoding: "utf8" });
      expect(r.stdout + r.stderr).toBe("");
      expect(r.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
