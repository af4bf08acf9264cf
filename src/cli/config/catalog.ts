/**
 * The aggregated catalog of an `mcpServers` file, for `cost --config` and `lint --config`: every
 * server is started (or reached) once, its `tools/list` read, then shaped as `proxy --config`
 * would publish it (include/exclude, namespaced names). Both forms are returned, so a user sees
 * what the merged catalog costs per turn before and after the lists.
 */
import { listMcpTools } from "../../mcp/proxy/list-tools.js";
import { publishedName, selectTools } from "../../mcp/proxy/aggregate-catalog.js";
import { aggregateUpstreams } from "../host/config-proxy.js";
import { loadServersConfig } from "./load.js";

export interface ConfigCatalog {
  /** Every tool of every server, named as the proxy would name it. */
  all: Array<Record<string, unknown> & { name: string }>;
  /** What the proxy publishes: after include and exclude. */
  published: Array<Record<string, unknown> & { name: string }>;
}

export async function configCatalog(file: string): Promise<ConfigCatalog> {
  const config = loadServersConfig(file);
  const upstreams = aggregateUpstreams(config);
  const listed = await Promise.all(upstreams.map((u) => listMcpTools(u.target)));
  const all: ConfigCatalog["all"] = [];
  const published: ConfigCatalog["published"] = [];
  upstreams.forEach((u, i) => {
    const tools = listed[i]!;
    const rename = (t: (typeof tools)[number]) => ({
      ...(t as Record<string, unknown>),
      name: publishedName(u.namespace, config.separator, t.name),
    });
    all.push(...tools.map(rename));
    published.push(...selectTools(u, tools).map(rename));
  });
  return { all, published };
}
