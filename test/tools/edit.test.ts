import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, lstatSync, readFileSync, readdirSync, statSync, symlinkSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { editFile, probeEdit } from "../../src/tools/edit.js";
import { contentVersion } from "../../src/tools/text.js";
import { viewPath } from "../../src/tools/view.js";
import { binaryAvailable } from "../support/require.js";
import { makeWorkspace, refusalText, stable } from "./fixtures.js";

const s = makeWorkspace("edit");
afterAll(() => s.cleanup());

const refusal = (p: Promise<unknown>): Promise<string> => refusalText(p, s);

const PY = "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x + 1\n";

describe("file_edit", () => {
  it("replaces exactly one block and returns the new version, changed lines and a snippet", async () => {
    const p = s.write("one.py", "a = 1\nb = 2\nc = 3\n");
    const r = await editFile(s.ws, { path: p, old_str: "b = 2", new_str: "b = 20\nb2 = 21" });
    const after = readFileSync(p, "utf8");
    expect(after).toBe("a = 1\nb = 20\nb2 = 21\nc = 3\n");
    expect(r.output).toMatchObject({
      version: contentVersion(after),
      replacements: 1,
      changed_lines: { start: 2, end: 3 },
      total_lines: 4,
    });
    expect(r.state).toEqual({ path: p, version: contentVersion(after) });
    expect(stable(r.text!, s).replace(/[0-9a-f]{64}/, "<sha>")).toMatchInlineSnapshot(`
      "Edited <tmp>/ws/one.py: 1 replacement, lines 2-3 changed, now 4 lines · version <sha>
      1	a = 1
      2	b = 20
      3	b2 = 21
      4	c = 3"
    `);
  });

  it("0 matches: unchanged, names the count and the near-match with different whitespace and its line", async () => {
    const p = s.write("ws.py", PY.replace("def g(x):\n    return x + 1", "def g(x):\n    return  x * 2"));
    const before = readFileSync(p);
    const msg = await refusal(editFile(s.ws, { path: p, old_str: "def g(x):\n  return x * 2", new_str: "pass" }));
    expect(readFileSync(p)).toEqual(before);
    expect(msg).toMatchInlineSnapshot(`
      "no_match: old_str matches 0 blocks in <tmp>/ws/ws.py; the file is unchanged. Closest near-match: the same text with different whitespace at line 5:
      5	def g(x):
      6	    return  x * 2
      Copy the exact text from the file (file_view shows it) and retry."
    `);
  });

  it("0 matches: names a similar block when no whitespace-only match exists", async () => {
    const p = s.write("sim.py", PY);
    const msg = await refusal(editFile(s.ws, { path: p, old_str: "    return x + 2", new_str: "pass" }));
    expect(msg).toMatchInlineSnapshot(`
      "no_match: old_str matches 0 blocks in <tmp>/ws/sim.py; the file is unchanged. Closest near-match: a similar block (similarity 0.91) at line 2:
      2	    return x + 1
      Copy the exact text from the file (file_view shows it) and retry."
    `);
  });

  it("0 matches and nothing alike: says so", async () => {
    const p = s.write("far.py", PY);
    expect(await refusal(editFile(s.ws, { path: p, old_str: "zzzz qqqq", new_str: "" }))).toMatchInlineSnapshot(
      `"no_match: old_str matches 0 blocks in <tmp>/ws/far.py; the file is unchanged. No similar block was found; view the file with file_view and copy the exact text, including indentation."`,
    );
  });

  it(">1 matches without allow_multiple: unchanged, names the count and each line", async () => {
    const p = s.write("multi.py", PY);
    const msg = await refusal(editFile(s.ws, { path: p, old_str: "return x + 1", new_str: "return x + 2" }));
    expect(readFileSync(p, "utf8")).toBe(PY);
    expect(msg).toMatchInlineSnapshot(
      `"multiple_matches: old_str matches 2 blocks in <tmp>/ws/multi.py (starting at lines 2, 6); the file is unchanged. Include more surrounding lines in old_str so it matches exactly one block, or set allow_multiple to true to replace all 2"`,
    );
  });

  it("allow_multiple replaces every match and reports the range", async () => {
    const p = s.write("all.py", PY);
    const r = await editFile(s.ws, { path: p, old_str: "return x + 1", new_str: "return x + 2", allow_multiple: true });
    expect(readFileSync(p, "utf8")).toBe(PY.replaceAll("x + 1", "x + 2"));
    expect(r.output).toMatchObject({ replacements: 2, changed_lines: { start: 2, end: 6 } });
  });

  it("an empty new_str deletes the block", async () => {
    const p = s.write("del.txt", "keep\ndrop me\nkeep too\n");
    const r = await editFile(s.ws, { path: p, old_str: "drop me\n", new_str: "" });
    expect(readFileSync(p, "utf8")).toBe("keep\nkeep too\n");
    expect(r.output).toMatchObject({ changed_lines: { start: 2, end: 2 }, total_lines: 2 });
  });

  it("keeps CRLF line endings when old_str and new_str use LF", async () => {
    const p = s.write("crlf.txt", "one\r\ntwo\r\nthree\r\n");
    await editFile(s.ws, { path: p, old_str: "one\ntwo", new_str: "uno\ndos\nmas" });
    expect(readFileSync(p, "utf8")).toBe("uno\r\ndos\r\nmas\r\nthree\r\n");
  });

  it("keeps a missing final newline missing, and a final newline present", async () => {
    const none = s.write("nofinal.txt", "alpha\nbeta");
    await editFile(s.ws, { path: none, old_str: "beta", new_str: "gamma" });
    expect(readFileSync(none, "utf8")).toBe("alpha\ngamma");
    const some = s.write("final.txt", "alpha\nbeta\n");
    await editFile(s.ws, { path: some, old_str: "beta\n", new_str: "gamma" });
    expect(readFileSync(some, "utf8")).toBe("alpha\ngamma\n");
  });

  it("keeps the file mode and leaves no temporary file behind", async () => {
    const p = s.write("tool.sh", "#!/bin/sh\necho hi\n");
    chmodSync(p, 0o751);
    await editFile(s.ws, { path: p, old_str: "hi", new_str: "ho" });
    expect(statSync(p).mode & 0o7777).toBe(0o751);
    expect(readdirSync(s.root).filter((f) => f.includes(".toolgate-"))).toEqual([]);
  });

  it("drops setuid and setgid from an edited file: text the agent chose never runs with its owner's rights", async () => {
    const p = s.write("suid.sh", "#!/bin/sh\necho hi\n");
    chmodSync(p, 0o6755);
    await editFile(s.ws, { path: p, old_str: "hi", new_str: "ho" });
    expect(statSync(p).mode & 0o7777).toBe(0o755);
  });

  it.runIf(process.getuid?.() === 0)("keeps the file's owner and group (root may give the new file away)", async () => {
    const p = s.write("owned.txt", "mine\n");
    chownSync(p, 4321, 4322);
    await editFile(s.ws, { path: p, old_str: "mine", new_str: "still mine" });
    expect(statSync(p)).toMatchObject({ uid: 4321, gid: 4322 });
  });

  it("edits through a symlink that stays in the workspace: the target changes, the link stays a link", async () => {
    const target = s.write("linked/real.txt", "old\n");
    symlinkSync("linked/real.txt", `${s.root}/via-link.txt`);
    const r = await editFile(s.ws, { path: `${s.root}/via-link.txt`, old_str: "old", new_str: "new" });
    expect(r.output).toMatchObject({ path: target });
    expect(readFileSync(target, "utf8")).toBe("new\n");
    expect(lstatSync(`${s.root}/via-link.txt`).isSymbolicLink()).toBe(true);
  });

  it("refuses a stale expected_version; accepts the one file_view returned", async () => {
    const p = s.write("ver.txt", "v1\n");
    const viewed = await viewPath(s.ws, { path: p, offset: 1, limit: 10 });
    const version = (viewed.output as { version: string }).version;
    await editFile(s.ws, { path: p, old_str: "v1", new_str: "v2", expected_version: version });
    const msg = await refusal(editFile(s.ws, { path: p, old_str: "v2", new_str: "v3", expected_version: version }));
    expect(readFileSync(p, "utf8")).toBe("v2\n");
    expect(msg.replace(/[0-9a-f]{64}/g, "<sha>")).toMatchInlineSnapshot(
      `"version_mismatch: expected_version <sha> does not match <tmp>/ws/ver.txt, which is now at version <sha>: the file changed since it was viewed; view it again with file_view and retry with the new version"`,
    );
  });

  it("refuses a missing file, a binary file and invalid UTF-8", async () => {
    expect(
      await refusal(editFile(s.ws, { path: `${s.root}/none.txt`, old_str: "a", new_str: "b" })),
    ).toMatchInlineSnapshot(
      `"not_found: path <tmp>/ws/none.txt does not exist; file_edit changes existing files (create one with bash_execute, e.g. printf '...' > <tmp>/ws/none.txt)"`,
    );
    const bin = s.write("b.bin", Buffer.from([0x61, 0x00, 0x62]));
    expect(await refusal(editFile(s.ws, { path: bin, old_str: "a", new_str: "b" }))).toMatchInlineSnapshot(
      `"binary_file: <tmp>/ws/b.bin is a binary file; file_edit edits text only"`,
    );
    const latin = s.write("l.txt", Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    expect(await refusal(editFile(s.ws, { path: latin, old_str: "caf", new_str: "tea" }))).toMatchInlineSnapshot(
      `"not_utf8: <tmp>/ws/l.txt is not valid UTF-8, so replacing text could corrupt it; edit it with bash_execute (e.g. sed) instead"`,
    );
  });

  it.runIf(binaryAvailable("chattr", ["-V"]))(
    "a write that fails leaves the file unchanged and is a no-effect refusal",
    async () => {
      const p = s.write("locked/f.txt", "a\n");
      // chattr +i (immutable folder) stops even root from creating the temporary file.
      expect(spawnSync("chattr", ["+i", `${s.root}/locked`]).status).toBe(0);
      try {
        const msg = await refusal(editFile(s.ws, { path: p, old_str: "a", new_str: "b" }));
        expect(msg.replace(/open '[^']+'/, "open '<temp>'")).toMatchInlineSnapshot(
          `"write_failed: could not write <tmp>/ws/locked/f.txt: EPERM: operation not permitted, open '<temp>'; the file is unchanged"`,
        );
        expect(readFileSync(p, "utf8")).toBe("a\n");
      } finally {
        spawnSync("chattr", ["-i", `${s.root}/locked`]);
      }
    },
  );

  it("edits a 10 MB file", async () => {
    const body = Array.from({ length: 1_000_000 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    const p = s.write("big.txt", body);
    const r = await editFile(s.ws, { path: p, old_str: "line 777777\n", new_str: "changed\n" });
    expect(r.output).toMatchObject({ changed_lines: { start: 777777, end: 777777 }, total_lines: 1_000_000 });
    const after = readFileSync(p, "utf8");
    expect(after.length).toBe(body.length - "line 777777".length + "changed".length);
    expect(after.split("\n")[777776]).toBe("changed");
  });
});

describe("file_edit probe (settling an IN_DOUBT edit)", () => {
  it("old_str gone: applied, with the file's current version", async () => {
    const p = s.write("probe1.txt", "after\n");
    expect(await probeEdit(s.ws, { path: p, old_str: "before", new_str: "after" })).toEqual({
      outcome: "applied",
      result: { path: p, version: contentVersion("after\n"), probed: true },
    });
  });

  it("old_str still there and new_str absent: not applied", async () => {
    const p = s.write("probe2.txt", "before\n");
    expect(await probeEdit(s.ws, { path: p, old_str: "before", new_str: "after" })).toEqual({ outcome: "not_applied" });
  });

  it("cannot tell when new_str contains old_str: unknown", async () => {
    const p = s.write("probe3.txt", "nn\n");
    expect(await probeEdit(s.ws, { path: p, old_str: "n", new_str: "nn" })).toMatchObject({ outcome: "unknown" });
  });
});
