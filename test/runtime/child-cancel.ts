/**
 * A child toolgate for the cancellation test that must run as another user: a gateway over the
 * coding catalog of argv[2] runs bash_execute with the command in argv[3]; a line on standard
 * input cancels it through the call's signal. Prints the observation and the record's state as
 * one JSON line.
 */
import { createInterface } from "node:readline";
import { createGateway } from "../../src/runtime/gateway.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";

const [workspace, command] = process.argv.slice(2) as [string, string];
const store = createMemoryStore();
const gateway = createGateway({
  tools: createCodingCatalog({ workspace, sandbox: { warn: () => {} } }),
  store,
  audit: false,
});
const abort = new AbortController();
createInterface({ input: process.stdin }).once("line", () => abort.abort());
const o = await gateway.call(
  { trajectory_id: "t-child", turn: 0, call_id: "c", tool: "bash_execute", arguments: { command, timeout_ms: 60_000 } },
  { signal: abort.signal },
);
const key = (o.error?.detail as { key?: string } | undefined)?.key;
const record = key ? await store.records.get(key, Date.now()) : null;
process.stdout.write(JSON.stringify({ observation: o, record_state: record?.state ?? null }) + "\n");
await gateway.close();
process.exit(0);
