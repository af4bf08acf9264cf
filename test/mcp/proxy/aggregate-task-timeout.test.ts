/**
 * `task_timeout_ms` in an mcpServers file: the bound of a call a server runs as a task, set per
 * server and per tool (the tool's first, else an hour), never less than the tool's own
 * `timeout_ms`, which still bounds each request. Against the real server-everything, whose
 * `simulate-research-query` runs only as a task and takes a second a stage: with a tool limit of
 * one second it answers under a long task bound, and is cut under a short one with a message naming
 * where the file sets it. A tool that never runs as a task keeps its own limit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GuardStore } from "../../../src/idempotency/guard-store.js";
import { openGuardStore } from "../../../src/idempotency/open-guard.js";
import { obsOf, ids, tempDir, textOf } from "../support.js";
import { everythingServer, startAggregate, type Aggregate } from "./aggregate-support.js";

const node = process.execPath;
const TOOL = "simulate-research-query";
const ev = (toolgate: Record<string, unknown>) => ({ command: node, args: [everythingServer, "stdio"], toolgate });

let guard: GuardStore;
let agg: Aggregate;

beforeAll(async () => {
  guard = await openGuardStore("memory:");
  agg = await startAggregate(
    tempDir("aggregate-task-timeout"),
    {
      mcpServers: {
        long: ev({ include: [TOOL, "echo"], effect: "read", timeout_ms: 1000, task_timeout_ms: 120_000 }),
        short: ev({ include: [TOOL], effect: "read", timeout_ms: 1000, tools: { [TOOL]: { task_timeout_ms: 1500 } } }),
        plain: ev({ include: [TOOL], effect: "read", timeout_ms: 1000 }),
        wide: ev({ include: [TOOL], effect: "read", timeout_ms: 200_000, task_timeout_ms: 120_000 }),
      },
    },
    guard,
  );
}, 60_000);

afterAll(async () => {
  await agg?.close();
  await guard?.close();
});

const limit = (name: string) => agg.proxy.tools.find((t) => t.name === name)?.timeout_ms;

describe("a server's task_timeout_ms in the mcpServers file", { timeout: 60_000 }, () => {
  it("bounds its tools that run as tasks, the tool's own first, else an hour; never below the tool's limit", () => {
    expect({
      long: limit(`long__${TOOL}`),
      echo: limit("long__echo"),
      short: limit(`short__${TOOL}`),
      plain: limit(`plain__${TOOL}`),
      wide: limit(`wide__${TOOL}`),
    }).toEqual({ long: 120_000, echo: 1000, short: 1500, plain: 3_600_000, wide: 200_000 });
  });

  it("a task call longer than the tool's limit answers within the task bound", async () => {
    const r = await agg.client.callTool({
      name: `long__${TOOL}`,
      arguments: { topic: "tides" },
      _meta: ids("long-research"),
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(textOf(r)).toContain("# Research Report: tides");
  });

  it("cut at a short task bound, it says where the file sets it", async () => {
    const r = await agg.client.callTool({
      name: `short__${TOOL}`,
      arguments: { topic: "storms" },
      _meta: ids("short-research"),
    });
    expect(r.isError).toBe(true);
    expect(obsOf(r).error?.code).toBe("timeout");
    expect(textOf(r)).toContain(
      `That is the time limit toolgate proxy sets for short__${TOOL} while its server (short) runs it as a task (1500 ms). If the work needs longer, tell the user: whoever runs toolgate proxy can raise it with "task_timeout_ms" in mcpServers.short.toolgate (or in its "tools": {"${TOOL}": {...}}); or split the work into smaller calls.`,
    );
  });
});
