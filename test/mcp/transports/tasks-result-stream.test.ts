/**
 * A 2025-11-25 task's question goes on the stream of its tasks/result (`server/task-routes.ts`):
 * `job_asks` (`fixtures/tasks-catalog.ts`) run as a task-augmented tools/call, asking its caller
 * which branch, with the real SDK v2 client and `@modelcontextprotocol/ext-tasks` (whose 2025-11-25
 * driver polls tasks/get to the end and never calls tasks/result before: checked in its source).
 *
 * Over Streamable HTTP (in process) with a client whose GET is refused (405, as the SDK takes a
 * server without the stream): a question asked while tasks/result waits goes on it; one asked
 * before goes once tasks/result arrives; a client that only polls gets the task's failure, naming
 * what to do, at its first read of the task input_required past the time it had for tasks/result
 * (`resultGrace`: a second here, its pollInterval being 50 ms; not when the 10-minute bound ends).
 * With the GET stream open, a client that only polls is asked there. Over stdio (`serve --catalog`
 * spawned from source) the ext-tasks client that only polls is asked on the one stream.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Client, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import catalog from "../fixtures/tasks-catalog.js";
import { notesServeCommand, tempDir } from "../support.js";
import { tasksHttp } from "./tasks-http.js";
import { MIN_RESULT_GRACE_MS } from "../../../src/mcp/server/task-routes.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

const Task = z.looseObject({ taskId: z.string(), status: z.string(), statusMessage: z.string().optional() });
const Created = z.looseObject({ task: Task });
const CallResult = z.looseObject({
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
  isError: z.boolean().optional(),
  _meta: z.looseObject({}).optional(),
});
const text = (r: { content: { text?: string }[] }) => r.content.map((c) => c.text ?? "").join("\n");

/** `job_asks` (in process, memory store, tasks polled every 50 ms) served over Streamable HTTP. */
async function httpServer(): Promise<URL> {
  process.env.NOTES_DIR = tempDir("tasks-result-notes");
  const served = await tasksHttp(catalog, "memory:", 50);
  cleanup.push(served.close);
  return served.url;
}

/** A client transport to `url` whose GET stream the server never sees (the client is told 405); `refused` counts the GETs. */
function withoutGetStream(url: URL): { transport: Transport; refused: () => number } {
  let refused = 0;
  const transport = new StreamableHTTPClientTransport(url, {
    fetch: async (input, init) => {
      if ((init?.method ?? "GET") === "GET") {
        refused++;
        return new Response(null, { status: 405, headers: { allow: "POST, DELETE" } });
      }
      return fetch(input, init);
    },
  });
  return { transport, refused: () => refused };
}

/**
 * A 2025-11-25 SDK v2 client that declared form elicitation and answers each with branch `branch`
 * (null: sets no handler, an ext-tasks session answers); the questions it got.
 */
async function answering(transport: Transport, branch: string | null) {
  const c = new Client({ name: "tasks-result", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
  const asked: Record<string, unknown>[] = [];
  if (branch !== null)
    c.setRequestHandler("elicitation/create", (request) => {
      asked.push(request.params as Record<string, unknown>);
      return { action: "accept", content: { branch } };
    });
  await c.connect(transport);
  cleanup.push(() => c.close());
  return { c, asked };
}

const startTask = (c: Client, name: string) =>
  c.request(
    { method: "tools/call", params: { name: "job_asks", arguments: { name }, task: { ttl: 600_000 } } } as never,
    Created,
  );
const getTask = (c: Client, taskId: string) => c.request({ method: "tasks/get", params: { taskId } } as never, Task);
const resultOf = (c: Client, taskId: string) =>
  c.request({ method: "tasks/result", params: { taskId } } as never, CallResult, { timeout: 60_000 });

/** Polls the task with tasks/get until `done` holds of it. */
async function pollUntil(c: Client, taskId: string, done: (t: z.infer<typeof Task>) => boolean) {
  for (;;) {
    const t = await getTask(c, taskId);
    if (done(t)) return t;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * `job_asks` named `name` called as a task through an ext-tasks session on a 2025-11-25 SDK v2
 * client (its driver polls tasks/get only), whose input handler answers branch `name`; how it settled and what it was asked.
 */
async function polledOnly(transport: Transport, name: string) {
  const { c } = await answering(transport, null);
  const heard: unknown[] = [];
  const s = createTaskSessionFromClient(c, {
    endpointId: `toolgate-${name}`,
    onInputRequest: async (request) => {
      heard.push(request);
      return { action: "accept", content: { branch: name } } as never;
    },
  });
  cleanup.push(() => s.close());
  const execution = await s.callTool("job_asks", { name }, { task: { preference: "require" } });
  return { settled: await execution.settle(), heard };
}

const relatedTo = (taskId: string) => ({ "io.modelcontextprotocol/related-task": { taskId } });

describe("a 2025-11-25 task's question, on its tasks/result stream", { timeout: 60_000 }, () => {
  it("over HTTP without a GET stream: a question asked while tasks/result waits goes on it", async () => {
    const { transport, refused } = withoutGetStream(await httpServer());
    const { c, asked } = await answering(transport, "main");
    const { task } = await startTask(c, "waiting");
    const result = await resultOf(c, task.taskId);
    expect(result.isError, text(result)).toBeFalsy();
    expect(text(result)).toContain('\\"branch\\":\\"main\\"');
    expect(result._meta).toMatchObject(relatedTo(task.taskId));
    expect(asked).toEqual([expect.objectContaining({ message: "Which branch?", _meta: relatedTo(task.taskId) })]);
    // The client tried its GET stream and the server never had one: only a POST's stream could carry the question.
    expect(refused()).toBeGreaterThan(0);
  });

  it("over HTTP without a GET stream: a question asked before tasks/result is sent once it arrives", async () => {
    const { transport } = withoutGetStream(await httpServer());
    const { c, asked } = await answering(transport, "dev");
    const { task } = await startTask(c, "before");
    // One read of input_required is the client's cue to call tasks/result; the question waits for it.
    const waiting = await pollUntil(c, task.taskId, (t) => t.status === "input_required");
    expect(waiting.statusMessage).toContain("1 question (elicitation/create)");
    expect(asked).toEqual([]);
    const result = await resultOf(c, task.taskId);
    expect(result.isError, text(result)).toBeFalsy();
    expect(text(result)).toContain('\\"branch\\":\\"dev\\"');
    expect(asked).toEqual([expect.objectContaining({ _meta: relatedTo(task.taskId) })]);
  });

  it("over HTTP without a GET stream: a client that only polls (ext-tasks) gets the task's failure naming what to do, once its grace for tasks/result has passed", async () => {
    const { transport } = withoutGetStream(await httpServer());
    const { settled, heard } = await polledOnly(transport, "polls");
    // The server's default bound on a question is ten minutes: the failure came at the client's first read past the grace.
    const why = JSON.stringify(settled);
    expect(why).toContain("this client cannot be asked elicitation/create: it read task ");
    expect(why).toMatch(/input_required with tasks\/get \d+ times in \d+ ms but sent no tasks\/result/);
    expect(why).toContain(
      `within ${MIN_RESULT_GRACE_MS} ms of the first and has no GET stream open: call tasks/result once tasks/get shows a task input_required, or keep the session's GET stream open`,
    );
    expect(heard).toEqual([]);
  });

  it("over HTTP with the GET stream open: a client that only polls is asked there", async () => {
    const { c, asked } = await answering(new StreamableHTTPClientTransport(await httpServer()), "get");
    const { task } = await startTask(c, "on-get");
    const done = await pollUntil(c, task.taskId, (t) => t.status === "completed" || t.status === "failed");
    expect(done.status).toBe("completed");
    expect(asked).toEqual([expect.objectContaining({ _meta: relatedTo(task.taskId) })]);
    const result = await resultOf(c, task.taskId);
    expect(text(result)).toContain('\\"branch\\":\\"get\\"');
  });

  it("over stdio: a client that only polls (ext-tasks) is asked on the one stream, and its answer reaches the tool", async () => {
    const notes = tempDir("tasks-result-stdio");
    const transport = new StdioClientTransport({
      ...notesServeCommand(notes, { catalog: "tasks-catalog.ts" }),
      stderr: "pipe",
    });
    const { settled, heard } = await polledOnly(transport, "stdio");
    expect(JSON.stringify(settled)).toContain('\\\\\\"branch\\\\\\":\\\\\\"stdio\\\\\\"');
    expect(heard).toEqual([expect.objectContaining({ kind: "elicitation" })]);
    expect((heard[0] as { params: { _meta?: unknown } }).params._meta).toMatchObject(
      relatedTo(settled.lastTask!.taskId),
    );
  });
});
