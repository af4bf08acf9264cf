/**
 * A 2025-11-25 task's questions across replicas: `job_asks` (`fixtures/tasks-catalog.ts`) run as a
 * task-augmented tools/call on replica A, two toolgate HTTP servers in process on one SQLite store.
 * Its client (the real SDK v2 client, its GET stream refused so the question waits for tasks/result)
 * reads the task input_required on A; a client of the same principal on replica B reads it too, and
 * sees what is asked (`_meta["toolgate/input_requests"]`, from the task's record) and a statusMessage
 * saying only A's process takes the answers and what to do, while another principal on B reads an
 * id never issued. Answered on A, both read it completed.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import catalog from "../fixtures/tasks-catalog.js";
import { tempDir } from "../support.js";
import { tasksHttp } from "./tasks-http.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

const Task = z.looseObject({
  taskId: z.string(),
  status: z.string(),
  statusMessage: z.string().optional(),
  _meta: z.looseObject({}).optional(),
});
const Created = z.looseObject({ task: Task });
const CallResult = z.looseObject({ content: z.array(z.looseObject({ text: z.string().optional() })) });

/**
 * A client of `url` as the principal its bearer `token` makes, that declared form elicitation,
 * answers branch "main", and never opens a GET stream (told 405).
 */
async function client(url: URL, token = "alice") {
  const c = new Client({ name: "replicas", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
  c.setRequestHandler("elicitation/create", () => ({ action: "accept", content: { branch: "main" } }));
  const transport = new StreamableHTTPClientTransport(url, {
    fetch: async (input, init) =>
      (init?.method ?? "GET") === "GET"
        ? new Response(null, { status: 405, headers: { allow: "POST, DELETE" } })
        : fetch(input, init),
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await c.connect(transport);
  cleanup.push(() => c.close());
  return c;
}

const getTask = (c: Client, taskId: string) => c.request({ method: "tasks/get", params: { taskId } } as never, Task);

async function pollUntil(c: Client, taskId: string, done: (t: z.infer<typeof Task>) => boolean) {
  for (;;) {
    const t = await getTask(c, taskId);
    if (done(t)) return t;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("a 2025-11-25 task's questions on another replica", { timeout: 60_000 }, () => {
  it("another replica's tasks/get shows what is asked, and says the process running it takes the answers", async () => {
    process.env.NOTES_DIR = tempDir("tasks-replica-notes");
    const store = `sqlite:${join(tempDir("tasks-replica-store"), "tasks.db")}`;
    const a = await tasksHttp(catalog, store, 50);
    cleanup.push(a.close);
    const b = await tasksHttp(catalog, store, 50);
    cleanup.push(b.close);
    const onA = await client(a.url);
    const onB = await client(b.url);
    const { task } = await onA.request(
      { method: "tools/call", params: { name: "job_asks", arguments: { name: "r" }, task: { ttl: 600_000 } } } as never,
      Created,
    );
    const here = await pollUntil(onA, task.taskId, (t) => t.status === "input_required");
    // What job_asks asks, under its key, as the call gave it.
    const asked = {
      "toolgate/input_requests": {
        branch: {
          method: "elicitation/create",
          params: {
            mode: "form",
            message: "Which branch?",
            requestedSchema: { type: "object", properties: { branch: { type: "string" } } },
          },
        },
      },
    };
    // The process running it: its questions, and its own status message.
    expect(here._meta).toEqual(asked);
    expect(here.statusMessage).toBe(
      "waits for its caller to answer 1 question (elicitation/create): sent to its client as requests of this task",
    );
    const there = await getTask(onB, task.taskId);
    expect(there.status).toBe("input_required");
    expect(there._meta).toEqual(asked);
    expect(there.statusMessage).toBe(
      `waits for its caller to answer 1 question (elicitation/create): sent to its client as requests of this task, by the toolgate process that runs this task, which is not this one: this process cannot send them or take their answers. Call tasks/result of task ${task.taskId} in the session that started it, on that process (over HTTP its Mcp-Session-Id, which a balancer must route there), to be sent them; should that session be gone, the question fails within its bound and the call goes on without its answer (tasks/cancel stops it). The questions are in _meta["toolgate/input_requests"]`,
    );
    // Another principal on that replica reads an id never issued: neither the task nor what it asks.
    const mallory = await client(b.url, "mallory");
    const theirs = await getTask(mallory, task.taskId).then(JSON.stringify, (e: Error) => e.message);
    const never = await getTask(mallory, "tk_000000000_never").then(JSON.stringify, (e: Error) => e.message);
    expect(theirs).toMatch(/no task .* for this caller \(unknown, expired, or started by someone else\)/);
    expect(theirs.replace(task.taskId, "ID")).toBe(never.replace("tk_000000000_never", "ID"));
    expect(theirs).not.toContain("Which branch?");
    // Answered where it runs: both replicas read it completed, no question left in its record.
    const result = await onA.request({ method: "tasks/result", params: { taskId: task.taskId } } as never, CallResult, {
      timeout: 30_000,
    });
    expect(JSON.stringify(result)).toContain('\\"branch\\":\\"main\\"');
    const done = await getTask(onB, task.taskId);
    expect(done.status).toBe("completed");
    expect(done._meta).toBeUndefined();
  });
});
