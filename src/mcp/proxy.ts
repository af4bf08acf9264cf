/**
 * `toolgate proxy`: toolgate in front of any MCP server. The upstream's catalog is read once
 * (every page), linted (findings and a summary line for the operator), turned into ToolSpecs
 * and handed to a real Gateway, so every call meets validation, capability, idempotency,
 * approval and budgets before the upstream sees it. Serve the result with `serveStdio` or
 * `serveHttp` like any gateway.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { lintCatalog, type LintFinding } from "../schema/lint/index.js";
import { AUTHORITY, type AuthorityLevel, type ToolSpec } from "../schema/types.js";
import type { Gateway } from "../runtime/types.js";
import { proxyToolSpec } from "./proxy-tools.js";
import { connectUpstream, describeTarget, listAllTools, type UpstreamTarget } from "./upstream.js";

export interface ProxyOptions {
  upstream: UpstreamTarget;
  /** Builds the gateway over the proxied tools, e.g. `(tools) => createGateway({ tools, store })`. */
  gateway: (tools: ToolSpec[]) => Gateway | Promise<Gateway>;
  /** Operator log (lint findings, the summary, upstream exit); default stderr. Never stdout. */
  log?: (line: string) => void;
}

export interface Proxy {
  gateway: Gateway;
  tools: ToolSpec[];
  /** The upstream catalog's lint findings, as reported at start. */
  findings: LintFinding[];
  client: Client;
  /** Closes the gateway (waiting up to `grace_ms` for in-flight calls), then the upstream. */
  close(options?: { grace_ms?: number }): Promise<void>;
}

function summary(target: string, tools: ToolSpec[], findings: LintFinding[]): string {
  const levels: Record<AuthorityLevel, number> = { A0: 0, A1: 0, A2: 0, A3: 0 };
  for (const t of tools) levels[AUTHORITY[t.effect]] += 1;
  const errors = findings.filter((f) => f.severity === "error").length;
  const levelText = (Object.keys(levels) as AuthorityLevel[]).map((l) => `${l} ${levels[l]}`).join(", ");
  return `toolgate proxy: ${tools.length} tools from ${target} (${levelText}); lint: ${errors} errors, ${findings.length - errors} warnings`;
}

/** Starts (or reaches) the upstream, reads and lints its catalog, and builds the gateway. */
export async function createProxy(options: ProxyOptions): Promise<Proxy> {
  const log = options.log ?? ((line: string) => process.stderr.write(line + "\n"));
  const target = describeTarget(options.upstream);
  const client = await connectUpstream(options.upstream);
  let closing = false;
  client.onclose = () => {
    if (!closing) log(`toolgate proxy: the upstream ${target} closed the connection; its tools now fail with a tool error and in-flight writes are IN_DOUBT`);
  };
  try {
    const listed = await listAllTools(client);
    const findings = lintCatalog(listed);
    for (const f of findings) log(`lint ${f.severity} ${f.rule} ${f.tool} ${f.pointer || "/"}: ${f.message} (fix: ${f.fix})`);
    const tools = listed.map((t) => proxyToolSpec(client, t));
    log(summary(target, tools, findings));
    const gateway = await options.gateway(tools);
    return {
      gateway,
      tools,
      findings,
      client,
      async close(closeOptions) {
        closing = true;
        try {
          await gateway.close(closeOptions);
        } finally {
          await client.close();
        }
      },
    };
  } catch (err) {
    closing = true;
    await client.close();
    throw err;
  }
}
