/**
 * toolgate's own codes are closed unions of literals; a tool's own codes are a separate, open
 * branch (`ToolDefinedCode`) that travels beside them. Each `@ts-expect-error` below makes
 * `npm run typecheck` fail the day its union opens up again (say, to `| string`).
 */
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { NoEffectError, ToolgateError } from "../../src/core/errors.js";
import type { Observation } from "../../src/core/observation.js";
import type { SandboxDenial } from "../../src/tools/sandbox/denial.js";
import { refuse } from "../../src/runtime/call.js";
import { defineTool } from "../../src/schema/define.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";

/** Never called: it only has to type-check, with every unknown code refused. */
export function unknownCodesDoNotCompile(): unknown[] {
  // @ts-expect-error not an ObservationErrorCode
  const refusal = refuse("no_such_code", "m");
  // @ts-expect-error not a ToolgateErrorCode
  const error = new ToolgateError("no_such_code", "m");
  // @ts-expect-error not a SandboxDenialCode
  const denial: SandboxDenial = { code: "no_such_code", message: "m" };
  // @ts-expect-error an observation's error.code is closed too
  const observed: Observation["error"] = { code: "no_such_code", message: "m" };
  return [refusal, error, denial, observed];
}

describe("a tool's own codes", () => {
  const ledger = defineTool({
    name: "ledger_post",
    description: "Posts one entry to the ledger, unless the period is closed.",
    input: z.object({ period: z.string().max(7).describe("Period, YYYY-MM.") }).strict(),
    effect: "idempotent",
    check: (args) =>
      args.period < "2026-01"
        ? [{ path: "/period", code: "period_archived", message: "period is archived" }]
        : undefined,
    handler: () => {
      throw new NoEffectError("the period is closed", "period_closed");
    },
  });
  const gateway = createGateway({ tools: [ledger], store: createMemoryStore(), audit: false });
  afterAll(() => gateway.close());
  const call = (period: string) =>
    gateway.call({ trajectory_id: "t", turn: 1, call_id: `c-${period}`, tool: "ledger_post", arguments: { period } });

  it("a NoEffectError's code is the reason beside precondition_failed, never the error code", async () => {
    const o = await call("2026-03");
    expect(o.error).toMatchObject({ code: "precondition_failed", detail: { reason: "period_closed" } });
  });

  it("a check issue's code is the issue's, beside check_failed", async () => {
    const o = await call("2025-12");
    expect(o.error?.code).toBe("check_failed");
    expect(o.error?.issues).toEqual([{ path: "/period", code: "period_archived", message: "period is archived" }]);
  });
});
