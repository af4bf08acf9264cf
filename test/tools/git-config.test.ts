/**
 * The git config reader (src/tools/git-config.ts) against git itself: each text is parsed by
 * both, and `git config --list -z` must agree entry for entry; then the paths git-named.ts finds
 * in command values, and its cache.
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseGitConfig } from "../../src/tools/git-config.js";
import { cachedNamedByGit, commandPaths, type GitNamedIO } from "../../src/tools/git-named.js";
import { binaryAvailable } from "../support/require.js";

const dir = mkdtempSync(join(tmpdir(), "tg-git-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `section[.subsection].key` and value (null for a bare key), as git lists them. */
function byGit(text: string): [string, string | null][] {
  const file = join(dir, "config");
  writeFileSync(file, text);
  const r = spawnSync("git", ["config", "--file", file, "--list", "-z"], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout
    .split("\0")
    .filter(Boolean)
    .map((e) => {
      const nl = e.indexOf("\n");
      return nl === -1 ? [e, null] : [e.slice(0, nl), e.slice(nl + 1)];
    });
}
const byUs = (text: string): [string, string | null][] =>
  parseGitConfig(text).map((e) => [[e.section, e.subsection, e.key].filter((x) => x !== null).join("."), e.value]);

const TEXTS: Record<string, string> = {
  "names, case and comments":
    "# a comment\n; another\n[Core]\n\tBare = false ; trailing\n\tFsMonitor = ./mon # c\n\tflag\n",
  "subsections, new and old form":
    '[diff "LFS"]\n\ttextconv = sh conv.sh\n[Branch.Main]\n\tremote = origin\n[remote "o\\"q"]\n\turl = x\n',
  "quotes, escapes and inner blanks":
    '[alias]\n\tx = "!f() { echo \\"hi\\"; }; f"\n\tz = a\\tb\\\\c\\n\n\tw =   two  words  \n\tq = "  kept  " tail\n\th = "a # not a comment" # a comment\n',
  "continuation lines and CRLF": "[core]\r\n\teditor = vim \\\n  -u NONE\r\n\tpager = less\r\n",
  "a key on the header's line": "[core] editor = vi\n[user]name=x\n",
  "an empty value and a bare key": '[a]\n\tb =\n\tc\n\td = ""\n',
};

describe.runIf(binaryAvailable("git"))("parseGitConfig agrees with git config --list", () => {
  for (const [name, text] of Object.entries(TEXTS)) {
    it(name, () => {
      expect(byUs(text)).toEqual(byGit(text));
    });
  }
});

describe("parseGitConfig on what git refuses", () => {
  it("skips a malformed line and keeps the rest; a broken header drops the keys until the next good one", () => {
    expect(byUs("[core]\n\tbad line here\n\t= x\n\tok = 1\n[broken\n\tlost = 1\n[b]\n\tfound = 2\n")).toEqual([
      ["core.ok", "1"],
      ["b.found", "2"],
    ]);
  });

  it("reads a long text in one pass (a 1 MiB value, 100,000 keys)", () => {
    const long = `[a]\n\tv = ${"x".repeat(1 << 20)}\n`;
    expect(parseGitConfig(long)[0]!.value!.length).toBe(1 << 20);
    const many = "[a]\n" + Array.from({ length: 100_000 }, (_, i) => `\tk${i} = ${i}\n`).join("");
    expect(parseGitConfig(many)).toHaveLength(100_000);
  });
});

describe("commandPaths: the workspace files among a command's words", () => {
  const root = "/ws";
  const exists = (p: string) => ["/ws/conv.sh", "/ws/tool"].includes(p);
  it("words with a slash, words naming an entry at the root, option and assignment values; not programs on PATH", () => {
    expect(commandPaths("sh conv.sh --flag", root, exists)).toEqual(["/ws/conv.sh"]);
    expect(commandPaths("python3 not-yet.py .hook", root, exists)).toEqual(["/ws/not-yet.py", "/ws/.hook"]); // file names, existing or not
    expect(commandPaths("!./scripts/run.sh && tool | cat", root, exists)).toEqual(["/ws/scripts/run.sh", "/ws/tool"]);
    expect(commandPaths("--config=./c.json X=tools/x \"quoted dir/y\" 'a b'", root, exists)).toEqual([
      "/ws/c.json",
      "/ws/tools/x",
      "/ws/quoted dir/y",
    ]);
    expect(commandPaths("-c core.pager=./pager.sh status", root, exists)).toEqual(["/ws/pager.sh"]); // an alias setting a command itself
    expect(commandPaths("/ws/abs/x /usr/bin/env ~/bin/x $HOME/y . ..", root, exists)).toEqual([
      "/ws/abs/x",
      "/usr/bin/env",
    ]);
    expect(commandPaths("less -R", root, exists)).toEqual([]);
  });
});

describe("cachedNamedByGit: the last answer, while nothing it read has changed", () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "tg-git-named-")));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, ".git"));
  writeFileSync(join(root, ".git/config"), '[core]\n\thooksPath = hooks\n[diff "x"]\n\ttextconv = sh conv\n');
  let reads = 0;
  const io: GitNamedIO = {
    read(path, limit) {
      reads++;
      const st = statSync(path, { throwIfNoEntry: false });
      if (st === undefined) return Promise.resolve({ kind: "none" });
      if (st.isDirectory()) return Promise.resolve({ kind: "dir" });
      return Promise.resolve(
        st.size > limit ? { kind: "tooLarge", bytes: st.size } : { kind: "file", text: readFileSync(path, "utf8") },
      );
    },
    exists: (path) => existsSync(path),
  };

  it("reads nothing again while the files are as they were; a changed config, or a command's file appearing, is read again", async () => {
    const named = cachedNamedByGit(root, io, 0);
    expect(await named()).toEqual([join(root, "hooks")]);
    const first = reads;
    expect(await named()).toEqual([join(root, "hooks")]);
    expect(reads).toBe(first);
    writeFileSync(join(root, "conv"), "cat\n"); // `sh conv` now names a file
    expect(await named()).toEqual([join(root, "hooks"), join(root, "conv")]);
    expect(reads).toBeGreaterThan(first);
    const second = reads;
    writeFileSync(join(root, ".git/config"), "[core]\n\thooksPath = other\n");
    expect(await named()).toEqual([join(root, "other")]);
    expect(reads).toBeGreaterThan(second);
  });

  it("never keeps an answer built from a file changed within the last RACY_MS (the same timestamp tick could hide a change)", async () => {
    const named = cachedNamedByGit(root, io, 60_000);
    await named();
    const first = reads;
    await named();
    expect(reads).toBeGreaterThan(first);
  });
});
