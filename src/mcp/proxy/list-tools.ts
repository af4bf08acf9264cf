/**
 * `toolgate lint --mcp -- CMD ARGS...` (or `--mcp URL`): the live `tools/list` of an MCP server,
 * every page, for the schema linter. Starts the server, reads its catalog, stops it.
 */
import type { Tool } from "@modelcontextprotocol/client";
import { ToolgateError } from "../../core/errors.js";
import { connectUpstream, describeTarget, listAllTools, type UpstreamTarget } from "./upstream.js";

/** The complete tool list of the server at `target`. */
export async function listMcpTools(target: UpstreamTarget): Promise<Tool[]> {
  const client = await connectUpstream(target, "toolgate-lint");
  try {
    return await listAllTools(client);
  } finally {
    await client.close();
  }
}

/**
 * `CMD ARGS...` → a command to start, with `env` (default this process's environment, as the
 * user's own command would run); one `http(s)://…` argument → a Streamable HTTP server.
 */
export function targetFromArgv(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): UpstreamTarget {
  const [first, ...rest] = argv;
  if (first === undefined)
    throw new ToolgateError(
      "bad_flag",
      "--mcp needs the server to lint: toolgate lint --mcp -- npx -y @modelcontextprotocol/server-memory (or --mcp http://HOST:PORT/mcp)",
    );
  if (rest.length === 0 && /^https?:\/\//i.test(first)) return { url: first };
  const defined = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  return { command: first, args: rest, env: defined };
}

/** A lint source (`{ source, value }` for `lintSources`) holding a live server's `tools/list`. */
export async function mcpLintSource(argv: readonly string[]): Promise<{ source: string; value: { tools: Tool[] } }> {
  const target = targetFromArgv(argv);
  return { source: `mcp:${describeTarget(target)}`, value: { tools: await listMcpTools(target) } };
}
