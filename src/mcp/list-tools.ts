/**
 * `toolgate lint --mcp -- CMD ARGS...`: the live `tools/list` of an MCP server, every page,
 * for the schema linter. Starts the server, reads its catalog, stops it.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { connectUpstream, listAllTools, type UpstreamTarget } from "./upstream.js";

/** The complete tool list of the server at `target`. */
export async function listMcpTools(target: UpstreamTarget): Promise<Tool[]> {
  const client = await connectUpstream(target, "toolgate-lint");
  try {
    return await listAllTools(client);
  } finally {
    await client.close();
  }
}
