/**
 * `loadServersConfig(file)`: the `mcpServers` file a user already has (Claude Desktop's
 * `claude_desktop_config.json`, Claude Code's `.mcp.json`, Cursor's `mcp.json`, or VS Code's
 * `mcp.json` with `servers`), checked whole before anything starts. Other top-level keys those
 * files hold (a client's own settings) are left alone, unless one is a near miss of a key toolgate
 * reads.
 */
import { readFileSync } from "node:fs";
import { closest } from "../../core/closest.js";
import { describe } from "../../core/describe.js";
import { isPlainObject } from "../../core/json.js";
import { join } from "../../core/pointer.js";
import { parseJsonc, JsoncSyntaxError } from "./jsonc.js";
import { ConfigError, Problems } from "./problems.js";
import { readServerEntry } from "./server-entry.js";
import type { ServerConfig, ServersConfig } from "./types.js";

const SERVER_LISTS = ["mcpServers", "servers"] as const;
const TOP_KEYS = [...SERVER_LISTS, "toolgate"] as const;
const GLOBAL_KEYS = ["separator"] as const;
/** A server's name becomes its default namespace, so it keeps to the characters tool names may hold. */
const SERVER_NAME = /^[A-Za-z0-9_.-]{1,48}$/;
const SEPARATOR = /^[A-Za-z0-9_.-]{1,4}$/;

export interface LoadOptions {
  /** Where `${env:NAME}` is looked up. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Reads and checks `file`; throws `ConfigError` naming every mistake. */
export function loadServersConfig(file: string, options: LoadOptions = {}): ServersConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new ConfigError(file, [
      {
        pointer: "",
        message: e.code === "ENOENT" ? "no such file" : `cannot be read: ${e.message}`,
        fix: "name the file your MCP client reads, e.g. ~/.config/Claude/claude_desktop_config.json or .mcp.json",
      },
    ]);
  }
  return parseServersConfig(text, file, options);
}

/** Checks the text of a config file (`file` names it in messages). */
export function parseServersConfig(text: string, file: string, options: LoadOptions = {}): ServersConfig {
  const problems = new Problems();
  let parsed;
  try {
    parsed = parseJsonc(text);
  } catch (err) {
    if (!(err instanceof JsoncSyntaxError)) throw err;
    throw new ConfigError(file, [
      { pointer: "", message: `not JSON: ${err.message}`, fix: "fix the JSON at that place (comments are allowed)" },
    ]);
  }
  for (const at of parsed.duplicates)
    problems.add(
      at,
      "this key is written twice in one object; the first would be silently lost",
      "remove or rename one of them",
    );
  const root = parsed.value;
  if (!isPlainObject(root)) {
    problems.add(
      "",
      `expected an object with mcpServers, received ${describe(root)}`,
      'write {"mcpServers": {"NAME": {…}}}',
    );
    problems.throwIfAny(file);
  }
  const top = root as Record<string, unknown>;
  for (const key of Object.keys(top)) {
    const near = TOP_KEYS.includes(key as never) ? undefined : closest(key, TOP_KEYS);
    if (near) problems.add(join("", key), `unknown key ${JSON.stringify(key)}`, `did you mean "${near}"?`);
  }
  const separator = readGlobal(top, problems);
  const listKey = SERVER_LISTS.find((k) => top[k] !== undefined);
  if (listKey === undefined) {
    problems.add(
      "/mcpServers",
      "the file has no mcpServers (nor VS Code's servers)",
      'write {"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}',
    );
    problems.throwIfAny(file);
  }
  if (SERVER_LISTS.every((k) => top[k] !== undefined))
    problems.add(
      "/servers",
      "the file has both mcpServers and servers",
      "keep one list: move these entries into mcpServers",
    );
  const list = top[listKey!];
  const servers: ServerConfig[] = [];
  const disabled: string[] = [];
  if (!isPlainObject(list)) {
    problems.add(
      `/${listKey}`,
      `expected an object of named servers, received ${describe(list)}`,
      'write {"NAME": {"command": …}}',
    );
  } else {
    const env = options.env ?? process.env;
    for (const [name, entry] of Object.entries(list)) {
      const at = join(`/${listKey}`, name);
      if (!SERVER_NAME.test(name))
        problems.add(
          at,
          `a server's name becomes the prefix of its tools' names, so it is 1–48 letters, digits, _ . or -; received ${JSON.stringify(name)}`,
          `rename it, e.g. "${name.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 48) || "server"}"`,
        );
      const server = readServerEntry(name, entry, at, env, problems);
      if (server === "disabled") disabled.push(name);
      else if (server !== null) servers.push(server);
    }
    if (servers.length === 0 && disabled.length === 0 && problems.list.length === 0)
      problems.add(`/${listKey}`, "no servers are listed", "add at least one server entry");
    checkNamespaces(servers, listKey!, problems);
  }
  problems.throwIfAny(file);
  return { file, separator, servers, disabled };
}

function readGlobal(top: Record<string, unknown>, problems: Problems): string {
  const block = problems.object(top, "toolgate", "", '{"separator": "__"}');
  if (block === undefined) return "__";
  problems.unknownKeys(block, "/toolgate", GLOBAL_KEYS, "the top-level toolgate block");
  const sep = problems.string(block, "separator", "/toolgate", '"__"');
  if (sep === undefined) return "__";
  if (SEPARATOR.test(sep)) return sep;
  problems.add(
    "/toolgate/separator",
    `a separator is 1–4 letters, digits, _ . or -; received ${JSON.stringify(sep)}`,
    'write "__" (the default) or "."',
  );
  return "__";
}

/** Two servers publishing under one prefix would mix their tools; both places are named. */
function checkNamespaces(servers: readonly ServerConfig[], listKey: string, problems: Problems): void {
  const owner = new Map<string, string>();
  for (const s of servers) {
    if (s.namespace === "") continue;
    const key = s.namespace.toLowerCase();
    const first = owner.get(key);
    if (first === undefined) owner.set(key, s.name);
    else
      problems.add(
        join(`/${listKey}`, s.name, "toolgate", "namespace"),
        `servers ${JSON.stringify(first)} and ${JSON.stringify(s.name)} both publish their tools under the namespace ${JSON.stringify(s.namespace)}`,
        `give one of them its own "toolgate": {"namespace": "…"}`,
      );
  }
}
