/**
 * `toolgate cap keygen`: creates a key file, or adds a kid to one (rotation). The default file is
 * `$XDG_CONFIG_HOME/toolgate/keys.json` (`~/.config/toolgate/keys.json`), in a 0700 folder,
 * outside every workspace: a key the agent can read lets it mint any capability. The file is
 * written whole to a new 0600 file beside it and renamed over the old one, so it is never
 * half-written nor left with a looser mode, and a link at that name is replaced, not followed.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { generateKey, isKid, keyRingFromMap, serializeKeys } from "../../../capability/keys.js";
import { defaultKeyFile, realWorkspace } from "../../../state/location.js";
import { cwdCountsAsWorkspace } from "../../../state/placement.js";
import { createPrivateFile, ensurePrivateDir, isInside, realish } from "../../../state/private.js";
import { CliError, printJson, readAllSync } from "../../io.js";

export interface KeygenResult {
  file: string;
  kid: string;
  /** Every kid now in the file; never the keys. */
  kids: string[];
  /** Set when the file is inside the current folder's tree, which may be a workspace. */
  warning?: string;
}

/** Creates or extends `file` (default `defaultKeyFile()`) with a new kid. */
export function keygen(file: string | undefined, kid: string | undefined): KeygenResult {
  const target = file !== undefined ? resolve(file) : defaultKeyFile();
  if (file === undefined) ensurePrivateDir(dirname(target), "the key folder");
  const map = readKeyMap(target);
  const chosen = kid ?? `k${Object.keys(map).length + 1}`;
  if (!isKid(chosen))
    throw new CliError(
      `--kid must be 1–64 letters, digits, _ or -; received ${JSON.stringify(chosen)}; example --kid k2`,
    );
  if (Object.hasOwn(map, chosen)) throw new CliError(`${target} already has kid ${chosen}; choose another with --kid`);
  map[chosen] = generateKey();
  writeWhole(target, serializeKeys(map));
  const warning = insideCwd(target);
  return { file: target, kid: chosen, kids: Object.keys(map), ...(warning ? { warning } : {}) };
}

function readKeyMap(file: string): Record<string, string> {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return {};
    if (code === "ELOOP") throw new CliError(`${file} is a symbolic link; name the key file itself with --out`);
    throw new CliError(`cannot read ${file}: ${code ?? (err as Error).message}`);
  }
  let text: string;
  try {
    if (!fstatSync(fd).isFile()) throw new CliError(`${file} is not a regular file; name a key file with --out`);
    text = readAllSync(fd);
  } finally {
    closeSync(fd);
  }
  let map: Record<string, string>;
  try {
    map = JSON.parse(text) as Record<string, string>;
  } catch {
    // The parser's message can quote the content, which is key material: say only where.
    throw new CliError(
      `${file} is not valid JSON; expected {"kid":"base64 key"}; nothing was written (fix or move the file, or name another with --out)`,
    );
  }
  // Empty is a file being started; anything else must be a valid ring before a kid is added.
  if (!(typeof map === "object" && map !== null && Object.keys(map).length === 0))
    keyRingFromMap(map, `key file ${file}`);
  return map;
}

function writeWhole(file: string, text: string): void {
  const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  const fd = createPrivateFile(temp, "a new key file");
  let renamed = false;
  try {
    try {
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
    if (lstatOrNull(file)?.isDirectory()) throw new CliError(`${file} is a directory; name a key file with --out`);
    renameSync(temp, file);
    renamed = true;
  } finally {
    if (!renamed) rmSync(temp, { force: true });
  }
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

function insideCwd(file: string): string | undefined {
  const cwd = realWorkspace(process.cwd());
  if (!cwdCountsAsWorkspace(cwd) || !isInside(realish(file), cwd)) return undefined;
  let fallback = "~/.config/toolgate/keys.json";
  try {
    fallback = defaultKeyFile();
  } catch {
    // no home folder: keep the generic name
  }
  return `${file} is inside the current folder ${cwd}: if toolgate serves this folder as a workspace, the agent can read the key and mint any capability, and toolgate serve refuses a key file inside its workspace. Keep keys outside it: toolgate cap keygen without --out writes ${fallback}`;
}

export function register(cap: Command): void {
  cap
    .command("keygen")
    .description("create a key file (JSON kid → base64 key, mode 0600), or add a new kid to it for rotation")
    .option(
      "--out <file>",
      "key file to create or extend, outside every workspace toolgate serves (default $XDG_CONFIG_HOME/toolgate/keys.json, i.e. ~/.config/toolgate/keys.json, in a 0700 folder)",
    )
    .option("--kid <kid>", "key id (default k1, k2, …)")
    .option("--json", "print JSON")
    .action((flags: { out?: string; kid?: string; json?: boolean }) => {
      const r = keygen(flags.out, flags.kid);
      if (r.warning) process.stderr.write(`toolgate: warning: ${r.warning}\n`);
      if (flags.json) printJson({ file: r.file, kid: r.kid, kids: r.kids });
      else
        process.stdout.write(
          `wrote kid ${r.kid} to ${r.file} (kids: ${r.kids.join(", ")}; cap issue signs with the last one)\n`,
        );
    });
}
