/**
 * The workspace paths a repository's git config names for git to run or read on the host, so
 * that they are read-only for the agent like the config itself (workspace.ts `gitNamed`): the
 * hooks folder of `core.hooksPath`, the files `include.path` and `includeIf.*.path` pull in (read
 * in turn), the git folder a gitfile points at and its `commondir`, and the files named in the
 * values of keys git runs as commands (core.fsmonitor, core.sshCommand, core.editor, core.pager,
 * diff.*.textconv, filter.*.clean/smudge/process, credential.helper, gpg.program, alias.* with
 * `!`, … the list is `COMMAND_KEYS`). A word of such a command is a path when it holds a `/`
 * (`./x`, `tools/x`, an absolute path), reads as a file name (`sh conv.sh`), or names an entry at
 * the workspace root; any other word (`cat`, `git-lfs`) is a program found on PATH or an argument
 * that names no file. Paths outside the workspace are left out: the sandbox cannot change them.
 *
 * Everything is read through `read`, the file tools' walk (never following a link out of the
 * workspace), each file bounded in size, the include chain in depth and the files and paths in
 * number; past a bound the caller is refused rather than left with a partial list.
 */
import { lstatSync, statSync, type BigIntStats } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { NoEffectError } from "../core/errors.js";
import { parseGitConfig, type GitConfigEntry } from "./git-config.js";

/** What `read` finds at a path: a regular file's text (at most `limit` bytes, else `tooLarge`), a folder, or nothing
 * usable. */
export type GitFile =
  { kind: "file"; text: string } | { kind: "tooLarge"; bytes: number } | { kind: "dir" } | { kind: "none" };

export interface GitNamedIO {
  read(path: string, limit: number): Promise<GitFile>;
  /** Whether an entry (of any kind) is at this path inside the workspace. */
  exists(path: string): boolean;
}

/** Bytes of one config file (or gitfile, commondir) read. */
export const GIT_CONFIG_BYTES = 256 * 1024;
/** Config files read in all (the repository's, config.worktree and their includes). */
export const GIT_CONFIG_FILES = 16;
/** Paths named in all. */
export const GIT_NAMED_PATHS = 256;
/** Includes followed inside includes (git's own bound is 10). */
const INCLUDE_DEPTH = 10;

type Kind = "include" | "path" | "command";

/** Keys with a subsection (`diff.<driver>.textconv`) are written `section.*.key`; `section.*` is every key of a section
 * without one. */
const KEY_KINDS: Record<string, Kind> = {
  "include.path": "include",
  "includeif.*.path": "include",
  "core.hookspath": "path",
  "core.fsmonitor": "command",
  "core.sshcommand": "command",
  "core.editor": "command",
  "core.pager": "command",
  "core.askpass": "command",
  "core.gitproxy": "command",
  "core.alternaterefscommand": "command",
  "sequence.editor": "command",
  "diff.external": "command",
  "diff.*.textconv": "command",
  "diff.*.command": "command",
  "merge.*.driver": "command",
  "filter.*.clean": "command",
  "filter.*.smudge": "command",
  "filter.*.process": "command",
  "credential.helper": "command",
  "credential.*.helper": "command",
  "gpg.program": "command",
  "gpg.*.program": "command",
  "pager.*": "command",
  "alias.*": "command",
  "interactive.difffilter": "command",
  "browser.*.cmd": "command",
  "browser.*.path": "command",
  "difftool.*.cmd": "command",
  "difftool.*.path": "command",
  "mergetool.*.cmd": "command",
  "mergetool.*.path": "command",
  "man.*.cmd": "command",
  "man.*.path": "command",
  "sendemail.smtpserver": "command",
  "sendemail.tocmd": "command",
  "sendemail.cccmd": "command",
  "remote.*.uploadpack": "command",
  "remote.*.receivepack": "command",
  "submodule.*.update": "command",
  "trailer.*.command": "command",
  "trailer.*.cmd": "command",
};

/** The hooks git runs (githooks(5)): named one by one where core.hooksPath is the workspace root itself, which cannot
 * be made read-only whole. */
const HOOK_NAMES = [
  "applypatch-msg",
  "pre-applypatch",
  "post-applypatch",
  "pre-commit",
  "pre-merge-commit",
  "prepare-commit-msg",
  "commit-msg",
  "post-commit",
  "pre-rebase",
  "post-checkout",
  "post-merge",
  "pre-push",
  "pre-receive",
  "update",
  "proc-receive",
  "post-receive",
  "post-update",
  "reference-transaction",
  "push-to-checkout",
  "pre-auto-gc",
  "post-rewrite",
  "sendemail-validate",
  "fsmonitor-watchman",
  "p4-changelist",
  "p4-prepare-changelist",
  "p4-post-changelist",
  "p4-pre-submit",
  "post-index-change",
];

/** The keys whose values name files git runs: for the documentation and the tests. */
export const COMMAND_KEYS = Object.keys(KEY_KINDS).filter((k) => KEY_KINDS[k] === "command");

function kindOf(e: GitConfigEntry): Kind | undefined {
  if (e.subsection === null) return KEY_KINDS[`${e.section}.${e.key}`] ?? KEY_KINDS[`${e.section}.*`];
  return KEY_KINDS[`${e.section}.*.${e.key}`];
}

/** The paths (absolute, strictly inside `root`, the workspace's real root) the repository's git config names. */
export async function namedByGit(root: string, io: GitNamedIO): Promise<string[]> {
  const named = new Set<string>();
  const inside = (p: string) => p.startsWith(root + "/");
  const name = (p: string, from: string) => {
    if (!inside(p) || named.has(p)) return;
    if (named.size >= GIT_NAMED_PATHS)
      throw tooMuch(`names more than ${GIT_NAMED_PATHS} files and folders in the workspace`, from);
    named.add(p);
  };
  const readSmall = async (path: string): Promise<GitFile> => {
    const f = await io.read(path, GIT_CONFIG_BYTES);
    if (f.kind === "tooLarge") throw tooMuch(`is ${f.bytes} bytes, more than the ${GIT_CONFIG_BYTES} read`, path);
    return f;
  };

  const dotGit = join(root, ".git");
  const top = await readSmall(dotGit);
  let gitDir = dotGit;
  if (top.kind === "file") {
    // A gitfile (a linked worktree, a submodule, --separate-git-dir): `gitdir: <path>`, relative to its folder.
    const target = /^gitdir:[ \t]*(.*?)[ \t\r]*$/m.exec(top.text)?.[1];
    if (!target) return [];
    gitDir = resolve(root, target);
    name(gitDir, dotGit);
  } else if (top.kind !== "dir") return [];
  // A git folder outside the workspace is out of the sandbox's reach, and not read here.
  if (!inside(gitDir)) return [...named];

  let common = gitDir;
  const commondir = await readSmall(join(gitDir, "commondir"));
  if (commondir.kind === "file" && commondir.text.trim() !== "") {
    common = resolve(gitDir, commondir.text.trim());
    name(common, join(gitDir, "commondir"));
  }
  const queue: { path: string; depth: number }[] = [];
  if (inside(common)) queue.push({ path: join(common, "config"), depth: 0 });
  queue.push({ path: join(gitDir, "config.worktree"), depth: 0 });
  const read = new Set<string>();
  while (queue.length > 0) {
    const { path, depth } = queue.shift()!;
    if (read.has(path)) continue;
    if (read.size >= GIT_CONFIG_FILES)
      throw tooMuch(`includes more than ${GIT_CONFIG_FILES} config files in all`, path);
    read.add(path);
    const file = await readSmall(path);
    if (file.kind !== "file") continue;
    for (const e of parseGitConfig(file.text)) {
      const kind = kindOf(e);
      if (kind === undefined || e.value === null) continue;
      if (kind === "command") {
        for (const p of commandPaths(e.value, root, io.exists)) name(p, path);
        continue;
      }
      // include paths are relative to the including file's folder, core.hooksPath to the working tree's top.
      const p = pathValue(e.value, kind === "include" ? dirname(path) : root);
      if (p === null) continue;
      if (kind === "path" && p === root) for (const hook of HOOK_NAMES) name(join(root, hook), path);
      name(p, path);
      if (kind === "include" && depth < INCLUDE_DEPTH && inside(p)) queue.push({ path: p, depth: depth + 1 });
    }
  }
  return [...named];
}

/** A path-valued setting: absolute, or relative to `base`; `~` (a home folder) is never in the workspace. */
function pathValue(value: string, base: string): string | null {
  const v = value.trim();
  if (v === "" || v.startsWith("~")) return null;
  return isAbsolute(v) ? resolve(v) : resolve(base, v);
}

/**
 * The workspace paths among the words of a shell command: a word with a `/`; a word that reads as
 * a file name (`conv.sh`, `.hook`: a dot in it), existing or not, since an argument is opened from
 * the working tree's top and one created later would run as well; any other word naming an entry
 * at the root. `--option=value`, `NAME=value` and `core.pager=value` give their value; `!` (an
 * alias run by the shell) is dropped.
 */
export function commandPaths(command: string, root: string, exists: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (let word of shellWords(command.replace(/^\s*!/, ""))) {
    const assigned = /^[^/=]+=(.*)$/s.exec(word);
    if (assigned) word = assigned[1]!;
    else if (word.startsWith("-")) continue;
    if (word === "" || word === "." || word === ".." || word.startsWith("~") || word.includes("$")) continue;
    if (word.includes("/")) out.push(isAbsolute(word) ? resolve(word) : resolve(root, word));
    else if (word.includes(".") || exists(join(root, word))) out.push(join(root, word));
  }
  return out;
}

/** Words of a shell command line: blanks and operators split, quotes and backslashes removed (no expansion). */
function shellWords(command: string): string[] {
  const words: string[] = [];
  let word = "";
  let started = false;
  let quote: "'" | '"' | null = null;
  const end = () => {
    if (started) words.push(word);
    word = "";
    started = false;
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote !== null) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < command.length) word += command[++i];
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      started = true;
    } else if (c === "\\" && i + 1 < command.length) {
      word += command[++i];
      started = true;
    } else if (/[\s;|&()<>`]/.test(c)) end();
    else {
      word += c;
      started = true;
    }
  }
  end();
  return words;
}

/**
 * `namedByGit` for one workspace, answered again from the last run while nothing it consulted has
 * changed: each path read or looked for is fingerprinted before it is consulted (the entry
 * itself and what it leads to: device, inode, mode, size, mtime and ctime in ns), and the next
 * call compares them first (a few stat calls, no walk). A file changed less than RACY_MS ago is
 * never trusted this way (a change within the same timestamp tick would not show), so such a run
 * is not kept (`racyMs`, RACY_MS by default).
 */
export function cachedNamedByGit(root: string, io: GitNamedIO, racyMs = RACY_MS): () => Promise<string[]> {
  let last: { consulted: [string, string | null][]; paths: string[] } | null = null;
  return async () => {
    if (last !== null && last.consulted.every(([p, f]) => fingerprint(p, racyMs) === f)) return [...last.paths];
    const consulted: [string, string | null][] = [];
    const note = (p: string) => consulted.push([p, fingerprint(p, racyMs)]);
    const paths = await namedByGit(root, {
      read: (p, limit) => (note(p), io.read(p, limit)),
      exists: (p) => (note(p), io.exists(p)),
    });
    last = consulted.some(([, f]) => f === null) ? null : { consulted, paths };
    return [...paths];
  };
}

/** A file whose ctime is this recent may still change within the same timestamp tick. */
const RACY_MS = 2000;

/** What `path` is now, as text; null when it changed too recently to be compared later. */
function fingerprint(path: string, racyMs: number): string | null {
  const entry = statOrNull(() => lstatSync(path, { bigint: true, throwIfNoEntry: false }));
  if (entry === undefined) return "absent";
  const target = statOrNull(() => statSync(path, { bigint: true, throwIfNoEntry: false }));
  const recent = (st: BigIntStats) => Date.now() - Number(st.ctimeNs / 1_000_000n) < racyMs;
  if (recent(entry) || (target !== undefined && recent(target))) return null;
  const id = (st: BigIntStats | undefined) =>
    st === undefined ? "-" : `${st.dev}:${st.ino}:${st.mode}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  return `${id(entry)}|${id(target)}`;
}

function statOrNull(stat: () => BigIntStats | undefined): BigIntStats | undefined {
  try {
    return stat();
  } catch {
    return undefined; // ENOTDIR, ELOOP, EACCES: compared as absent
  }
}

function tooMuch(what: string, path: string): NoEffectError {
  return new NoEffectError(
    `the repository's git config ${path} ${what}, past what toolgate reads to find the files git runs on the host (core.hooksPath, include.path, the commands it names); nothing was run or changed. Make the config smaller, or the operator takes .git and .git/config out of the catalog's protectedPaths option`,
    "git_config_too_large",
  );
}
