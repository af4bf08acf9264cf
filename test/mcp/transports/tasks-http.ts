/**
 * A gateway of `tools` on `store`, its calls run as tasks (polled every 100 ms unless told), served
 * over Streamable HTTP in process: what the 2025-11-25 tasks suites share (`tasks.test.ts`,
 * `tasks-status.test.ts`, `tasks-result-stream.test.ts`).
 */
import type { ToolSpec } from "../../../src/core/tool.js";
import { openStore } from "../../../src/idempotency/open.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { createTaskRunner } from "../../../src/runtime/tasks.js";
import { serveHttp } from "../../../src/mcp/transports/http.js";

/** The server's URL, and how to end it (the server, the runner, the gateway). */
export async function tasksHttp(
  tools: ToolSpec[],
  store: string,
  poll_ms = 100,
): Promise<{ url: URL; close: () => Promise<void> }> {
  const opened = await openStore(store);
  const gateway = createGateway({ tools, store: opened, audit: false });
  const tasks = createTaskRunner(gateway, { store: opened, poll_ms });
  const http = await serveHttp(gateway, { port: 0, warn: () => {}, tasks });
  return {
    url: http.url,
    close: async () => {
      await http.close();
      tasks.close();
      await gateway.close({ grace_ms: 0 });
    },
  };
}
