/**
 * `toolgate/mcp`: a gateway over the Model Context Protocol, in process — an SDK `Server` for any
 * transport, stdio and Streamable HTTP, the proxy in front of another MCP server, the
 * conversions for a server of your own, and `serve`/`proxy` as the CLI runs them (its
 * defaults for state, store, keys and audit; its shutdown). An explicit list, documented in
 * docs/api.md.
 */
export { createMcpServer } from "../mcp/server/server.js";
export type { McpServerOptions } from "../mcp/server/server.js";
export type { PassThrough } from "../mcp/server/pass-through.js";
export type { ChangeFeed } from "../core/changes.js";
export { toMcpTool } from "../mcp/server/listing.js";
export { toCallToolResult, OBSERVATION_META } from "../mcp/server/result.js";
export { META_KEYS } from "../mcp/server/meta.js";
export { serveStdio } from "../mcp/transports/stdio.js";
export type { StdioOptions, StdioHandle } from "../mcp/transports/stdio.js";
export { serveHttp } from "../mcp/transports/http.js";
export type { HttpOptions, HttpHandle } from "../mcp/transports/http.js";
export { createProxy } from "../mcp/proxy/proxy.js";
export type { ProxyOptions, Proxy } from "../mcp/proxy/proxy.js";
export { listMcpTools } from "../mcp/proxy/list-tools.js";
export type { UpstreamTarget } from "../mcp/proxy/upstream.js";
export { gatewayFromSettings, openGateway } from "../cli/host/gateway-settings.js";
export type { GatewaySettings } from "../cli/host/gateway-settings.js";
export { runGatewayServer } from "../cli/host/run.js";
export type { RunOptions } from "../cli/host/run.js";
export type { ListenAddress } from "../cli/host/flags.js";
export { loadCatalogModule } from "../cli/host/catalog-module.js";
