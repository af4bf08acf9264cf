/**
 * One entry under `mcpServers`, as Claude Desktop, Claude Code, Cursor and VS Code write it:
 * stdio (`command`, `args`, `env`, `cwd`) or HTTP (`url`, `headers`), with an optional `type`,
 * plus toolgate's own `toolgate` block.
 */
import { basename } from "node:path";
import { describe } from "../../core/describe.js";
import { isPlainObject } from "../../core/json.js";
import { join } from "../../core/pointer.js";
import { expandVariables } from "./expand.js";
import type { Problems } from "./problems.js";
import { readToolgateBlock } from "./toolgate-block.js";
import type { ServerConfig, ServerTransport } from "./types.js";

const STDIO_KEYS = ["type", "command", "args", "env", "cwd", "disabled", "toolgate"] as const;
const HTTP_KEYS = ["type", "url", "headers", "disabled", "toolgate"] as const;
const TYPES = ["stdio", "http", "streamable-http"];

type Env = Readonly<Record<string, string | undefined>>;

/** The entry, or null when it is disabled or too broken to describe a server (its problems are recorded). */
export function readServerEntry(
  name: string,
  entry: unknown,
  pointer: string,
  env: Env,
  problems: Problems,
): ServerConfig | "disabled" | null {
  if (!isPlainObject(entry)) {
    problems.add(
      pointer,
      `a server entry must be an object, received ${describe(entry)}`,
      'write it as {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]} or {"url": "https://…/mcp"}',
    );
    return null;
  }
  if (problems.boolean(entry, "disabled", pointer) === true) return "disabled";
  const type = problems.string(entry, "type", pointer, '"stdio" or "http"');
  if (type !== undefined && !TYPES.includes(type)) {
    problems.add(
      join(pointer, "type"),
      type === "sse"
        ? "toolgate reaches upstreams over stdio or Streamable HTTP; the older SSE transport is not supported"
        : `expected "stdio" or "http", received ${JSON.stringify(type)}`,
      type === "sse"
        ? 'if the server also serves Streamable HTTP (often at /mcp), give that URL with "type": "http"'
        : 'write "stdio" for a command, "http" for a url, or leave type out',
    );
  }
  const isHttp = entry.url !== undefined || type === "http" || type === "streamable-http";
  const transport = isHttp
    ? httpTransport(entry, pointer, env, problems)
    : stdioTransport(entry, pointer, env, problems);
  const block = problems.object(entry, "toolgate", pointer, '{"namespace": "gh", "exclude": ["delete_*"]}');
  const rest = readToolgateBlock(block, name, join(pointer, "toolgate"), problems);
  return transport === null ? null : { name, transport, ...rest };
}

function stdioTransport(
  entry: Record<string, unknown>,
  pointer: string,
  env: Env,
  problems: Problems,
): ServerTransport | null {
  problems.unknownKeys(entry, pointer, STDIO_KEYS, "a stdio server entry");
  if ("serverUrl" in entry)
    problems.add(
      join(pointer, "serverUrl"),
      "toolgate reads the server's address from url",
      'rename "serverUrl" to "url"',
    );
  const command = problems.string(entry, "command", pointer, '"npx"');
  if (entry.command === undefined) {
    problems.add(
      join(pointer, "command"),
      "a server entry needs command (a program to start) or url (a server to reach); it has neither",
      'add "command": "npx", "args": ["-y", "PACKAGE"], or "url": "https://HOST/mcp"',
    );
  } else if (command === "") {
    problems.add(join(pointer, "command"), "command is empty", 'name the program to start, e.g. "npx" or "uvx"');
  }
  const args = (problems.strings(entry, "args", pointer, '["-y", "@modelcontextprotocol/server-memory"]') ?? []).map(
    (a, i) => expandVariables(a, env, problems, join(pointer, "args", i)),
  );
  const vars: Record<string, string> = {};
  for (const [k, v] of Object.entries(problems.stringMap(entry, "env", pointer, '{"API_KEY": "${env:API_KEY}"}')))
    vars[k] = expandVariables(v, env, problems, join(pointer, "env", k));
  const cwd = problems.string(entry, "cwd", pointer, '"/home/me/project"');
  if (!command) return null;
  const expanded = expandVariables(command, env, problems, join(pointer, "command"));
  if (startsItself(expanded, args)) {
    problems.add(
      pointer,
      "this entry starts toolgate with --config: toolgate would start itself as its own upstream",
      'remove this entry from the file toolgate reads, or add "disabled": true to it',
    );
    return null;
  }
  return {
    kind: "stdio",
    command: expanded,
    args,
    env: vars,
    ...(cwd !== undefined ? { cwd: expandVariables(cwd, env, problems, join(pointer, "cwd")) } : {}),
  };
}

/** An entry that runs `toolgate … --config` (directly or through npx) is toolgate's own entry in the client. */
function startsItself(command: string, args: readonly string[]): boolean {
  const words = [command, ...args].map((w) => basename(w));
  return (
    words.some((w) => w === "toolgate" || w.startsWith("toolgate@")) &&
    args.some((a) => a === "--config" || a.startsWith("--config="))
  );
}

function httpTransport(
  entry: Record<string, unknown>,
  pointer: string,
  env: Env,
  problems: Problems,
): ServerTransport | null {
  problems.unknownKeys(entry, pointer, HTTP_KEYS, "an HTTP server entry");
  const raw = problems.string(entry, "url", pointer, '"https://api.example.com/mcp"');
  if (entry.url === undefined) {
    problems.add(join(pointer, "url"), '"type": "http" needs url', 'add "url": "https://HOST/mcp"');
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(
    problems.stringMap(entry, "headers", pointer, '{"Authorization": "Bearer ${env:API_TOKEN}"}'),
  ))
    headers[k] = expandVariables(v, env, problems, join(pointer, "headers", k));
  if (raw === undefined) return null;
  const url = expandVariables(raw, env, problems, join(pointer, "url"));
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (parsed === null || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    problems.add(
      join(pointer, "url"),
      `expected an absolute http or https URL, received ${JSON.stringify(raw)}`,
      'write it as "https://HOST/mcp" (or http://127.0.0.1:PORT/mcp for a local server)',
    );
    return null;
  }
  return { kind: "http", url, headers };
}
