/**
 * `toolgate proxy --store memory: --audit A -- node UPSTREAM…` run from source as a stdio MCP
 * server: the parameters both SDKs' stdio client transports take, in a fresh working directory.
 */
import { join } from "node:path";
import { getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";
import { projectRoot } from "./require.js";
import { tempDir } from "../mcp/support.js";

export function proxyProcess(
  upstream: string[],
  prefix: string,
): { command: string; args: string[]; cwd: string; env: Record<string, string>; stderr: "pipe" } {
  return {
    command: process.execPath,
    args: [
      "--import",
      import.meta.resolve("tsx"),
      join(projectRoot, "src/cli/main.ts"),
      "proxy",
      "--store",
      "memory:",
      "--audit",
      join(tempDir(`${prefix}-state`), "audit.jsonl"),
      "--",
      process.execPath,
      ...upstream,
    ],
    cwd: tempDir(prefix),
    env: getDefaultEnvironment(),
    stderr: "pipe",
  };
}
