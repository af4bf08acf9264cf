/**
 * `toolgate proxy --store memory: --audit A [FLAGS…] -- node UPSTREAM…` run from source as a stdio
 * MCP server: the parameters both SDKs' stdio client transports take, in a fresh working directory
 * (`audit`: the trail's path, default one in a fresh state folder).
 */
import { join } from "node:path";
import { getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";
import { projectRoot } from "./require.js";
import { tempDir } from "../mcp/support.js";

export function proxyProcess(
  upstream: string[],
  prefix: string,
  flags: string[] = [],
  audit: string = join(tempDir(`${prefix}-state`), "audit.jsonl"),
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
      audit,
      ...flags,
      "--",
      process.execPath,
      ...upstream,
    ],
    cwd: tempDir(prefix),
    env: getDefaultEnvironment(),
    stderr: "pipe",
  };
}
