/** What a checked `mcpServers` file says: the servers to start and what toolgate does with each. */
import type { Effect } from "../../core/tool.js";

/** A number of calls allowed over a window of milliseconds. */
export interface RateLimitConfig {
  calls: number;
  window_ms: number;
}

/** How one upstream is started (stdio) or reached (Streamable HTTP). */
export type ServerTransport =
  | {
      kind: "stdio";
      command: string;
      args: string[];
      /** Exactly the variables the file names, expanded: the upstream gets these and a fixed few (PATH, HOME, …). */
      env: Record<string, string>;
      cwd?: string;
    }
  | { kind: "http"; url: string; headers: Record<string, string> };

export interface ToolOverride {
  /** The effect of a tool whose annotations do not declare one. */
  effect?: Effect;
  rate_limit?: RateLimitConfig;
  timeout_ms?: number;
  /** The bound of a call the upstream runs as a task, in place of `timeout_ms` (which still bounds each request). */
  task_timeout_ms?: number;
  budget_tokens?: number;
}

/** Names (or `*` patterns) to serve and never to serve: include (absent: all), then exclude. */
export interface ListPatterns {
  include?: string[];
  exclude: string[];
}

export interface ServerConfig {
  /** The key under `mcpServers`. */
  name: string;
  /** The prefix of its tools' names (default: the name); `""` publishes them unprefixed. */
  namespace: string;
  transport: ServerTransport;
  /** Upstream tool names (or `*` patterns) to publish; absent: all. */
  include?: string[];
  /** Upstream tool names (or `*` patterns) never published; applied after `include`. */
  exclude: string[];
  /** Its prompts served, by upstream name or `*` pattern (`include_prompts`, `exclude_prompts`); absent: all. */
  prompts?: ListPatterns;
  /** Its resources and templates served, by URI, uriTemplate or `*` pattern (`include_resources`, `exclude_resources`); absent: all. */
  resources?: ListPatterns;
  /** The effect of this server's tools that declare none (default: destructive, A3). */
  effect?: Effect;
  tools: Record<string, ToolOverride>;
  budget_tokens?: number;
  timeout_ms?: number;
  /** The bound of a call this server runs as a task (each tool's own in `tools` first). */
  task_timeout_ms?: number;
  /** Start the upstream inside the envelope. */
  sandbox: boolean;
  /** Calls in flight at once to this upstream. */
  concurrency?: number;
  rate_limits: {
    /** All calls to this server together. */
    server?: RateLimitConfig;
    /** Each tool of this server on its own. */
    tool?: RateLimitConfig;
    /** Each grant holder's calls to this server. */
    grant?: RateLimitConfig;
  };
}

export interface ServersConfig {
  /** The file as given, for messages. */
  file: string;
  /** Between a namespace and a tool name (default `__`). */
  separator: string;
  servers: ServerConfig[];
  /** Entries left out on purpose (`"disabled": true`), by name. */
  disabled: string[];
}
