import { symlinkSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { NoEffectError } from "../../src/core/errors.js";
import { fromCheckIssue, renderIssue } from "../../src/schema/issue-text.js";
import { openWorkspace } from "../../src/tools/workspace.js";
import { makeWorkspace, stable } from "./fixtures.js";

const s = makeWorkspace("wsconf");
afterAll(() => s.cleanup());
s.write("src/a.ts", "a");
symlinkSync(s.outside, `${s.root}/out-dir`);
symlinkSync(`${s.root}/src`, `${s.root}/src-link`);

async function refusal(path: string): Promise<string> {
  const err = await s.ws.resolve(path).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NoEffectError);
  return `${(err as NoEffectError).code}: ${stable((err as Error).message, s)}`;
}

describe("opening a workspace", () => {
  it("a root that does not exist, or is a file, is refused with invalid_path naming it", () => {
    const open = (root: string) => {
      try {
        openWorkspace(root);
        return "opened";
      } catch (e) {
        return `${(e as NoEffectError).code}: ${stable((e as Error).message, s)}`;
      }
    };
    expect(open(`${s.root}/missing`)).toBe(
      'invalid_path: workspace root "<tmp>/ws/missing" does not exist; create the folder first (mkdir -p) or pass an existing one',
    );
    expect(open(`${s.root}/src/a.ts`)).toBe(
      'invalid_path: workspace root "<tmp>/ws/src/a.ts" is not a folder; pass the folder the tools work in',
    );
  });
});

describe("workspace confinement", () => {
  it("resolves existing files, new files under existing folders and symlinks that stay inside", async () => {
    expect(await s.ws.resolve(`${s.root}/src/a.ts`)).toBe(`${s.root}/src/a.ts`);
    expect(await s.ws.resolve(`${s.root}/src/new/deeper.ts`)).toBe(`${s.root}/src/new/deeper.ts`);
    expect(await s.ws.resolve(`${s.root}/src-link/a.ts`)).toBe(`${s.root}/src/a.ts`);
    expect(await s.ws.resolve(`${s.root}/src/../src/a.ts`)).toBe(`${s.root}/src/a.ts`);
    expect(await s.ws.resolve(s.root)).toBe(s.root);
  });

  it("refuses a relative path, naming the root and an example", async () => {
    expect(await refusal("src/a.ts")).toMatchInlineSnapshot(
      `"invalid_path: path must be an absolute path inside the workspace <tmp>/ws; received "src/a.ts"; example "<tmp>/ws/README.md""`,
    );
  });

  it("refuses .. traversal with the resolved path and the root", async () => {
    expect(await refusal(`${s.root}/../outside/secret.txt`)).toMatchInlineSnapshot(
      `"outside_workspace: path "<tmp>/ws/../outside/secret.txt" resolves to <tmp>/outside/secret.txt, which is outside the workspace <tmp>/ws; use a path under <tmp>/ws/"`,
    );
    expect(await refusal(`${s.root}/missing/../../outside/x`)).toContain("resolves to <tmp>/outside/x");
  });

  it("refuses a symlink inside the workspace that points outside, also for new files below it", async () => {
    expect(await refusal(`${s.root}/out-dir/secret.txt`)).toMatchInlineSnapshot(
      `"outside_workspace: path "<tmp>/ws/out-dir/secret.txt" resolves to <tmp>/outside/secret.txt, which is outside the workspace <tmp>/ws; use a path under <tmp>/ws/"`,
    );
    expect(await refusal(`${s.root}/out-dir/new/file.txt`)).toContain("resolves to <tmp>/outside/new/file.txt");
  });

  it("resolves symlinks itself: a relative link with .., an absolute link into the root, a chain; refuses a link that climbs out and a loop", async () => {
    symlinkSync("../src", `${s.root}/src/up-link`);
    symlinkSync(`${s.root}/src/a.ts`, `${s.root}/abs-link.ts`);
    symlinkSync("abs-link.ts", `${s.root}/chain.ts`);
    symlinkSync("../../outside", `${s.root}/src/climb`);
    symlinkSync("loop-b", `${s.root}/loop-a`);
    symlinkSync("loop-a", `${s.root}/loop-b`);
    expect(await s.ws.resolve(`${s.root}/src/up-link/a.ts`)).toBe(`${s.root}/src/a.ts`);
    expect(await s.ws.resolve(`${s.root}/chain.ts`)).toBe(`${s.root}/src/a.ts`);
    expect(await s.ws.resolve(`${s.root}/src-link/new.ts`)).toBe(`${s.root}/src/new.ts`);
    expect(await refusal(`${s.root}/src/climb/x`)).toMatchInlineSnapshot(
      `"outside_workspace: path "<tmp>/ws/src/climb/x" resolves to <tmp>/outside/x, which is outside the workspace <tmp>/ws; use a path under <tmp>/ws/"`,
    );
    expect(await refusal(`${s.root}/loop-a`)).toMatchInlineSnapshot(
      `"invalid_path: <tmp>/ws/loop-a cannot be resolved: a symlink in it loops (ELOOP); use a path without the looping link"`,
    );
  });

  it("a path that reaches the root through a link outside it is walked from the root", async () => {
    symlinkSync(s.root, `${s.base}/alias`);
    expect(await s.ws.resolve(`${s.base}/alias/src/a.ts`)).toBe(`${s.root}/src/a.ts`);
  });

  it("a file where a folder is expected: resolves to the path, and the tools say a folder on the way is a file", async () => {
    expect(await s.ws.resolve(`${s.root}/src/a.ts/b`)).toBe(`${s.root}/src/a.ts/b`);
    const opened = await s.ws.open(`${s.root}/src/a.ts/b`, "read");
    expect(opened).toMatchObject({ kind: "missing", notDir: true });
  });

  it("refuses a prefix sibling (ws-evil is not inside ws)", async () => {
    expect(await refusal(`${s.root}-evil/x`)).toContain("is outside the workspace <tmp>/ws;");
  });

  it("check() returns the refusal as an issue and target() the capability object", async () => {
    expect(await s.ws.check(`${s.root}/src/a.ts`)).toEqual([]);
    const [issue] = await s.ws.check("/etc/passwd");
    expect(issue).toMatchObject({
      path: "/path",
      code: "outside_workspace",
      message: expect.stringContaining('path "/etc/passwd" resolves to /etc/passwd'),
    });
    // The message names the path already: the rendered line does not repeat it as "received".
    expect(issue).not.toHaveProperty("received");
    expect(stable(renderIssue(fromCheckIssue((await s.ws.check("a.txt"))[0]!)), s)).toMatchInlineSnapshot(
      `"path must be an absolute path inside the workspace <tmp>/ws; received a.txt; example <tmp>/ws/README.md"`,
    );
    expect(stable(renderIssue(fromCheckIssue(issue!)), s)).toMatchInlineSnapshot(
      `"path "/etc/passwd" resolves to /etc/passwd, which is outside the workspace <tmp>/ws; use a path under <tmp>/ws/"`,
    );
    expect(await s.ws.target(`${s.root}/src-link/a.ts`)).toBe(`path:${s.root}/src/a.ts`);
  });
});
