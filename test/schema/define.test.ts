/** defineTool: zod → published JSON Schema 2020-12, typed handlers, refusal at definition time. */
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/schema/define.js";
import { NoEffectError, ToolgateError } from "../../src/core/errors.js";
import { lintTool } from "../../src/schema/lint/index.js";
import { createValidator } from "../../src/schema/validate.js";
import type { ToolContext } from "../../src/core/tool.js";

const ctx: ToolContext = {
  signal: new AbortController().signal,
  trajectory_id: "tr",
  turn: 0,
  call_id: "c1",
  now: () => 0,
  budget_tokens: 2000,
};

const input = z.object({
  customer_id: z.string().max(64).describe("Customer id, e.g. c_7."),
  status: z
    .enum(["pending", "shipped", "delivered", "cancelled"])
    .default("pending")
    .describe("Order status to filter by."),
  since: z.iso.date().describe("Earliest order date, YYYY-MM-DD."),
  page: z.object({ size_items: z.int().min(1).max(20).describe("Orders per page.") }).describe("Paging."),
});

const search = defineTool({
  name: "search_customer_orders",
  description: "Find at most 20 newest orders for one customer.",
  input,
  effect: "read",
  handler: (args) => {
    expectTypeOf(args).toEqualTypeOf<{
      customer_id: string;
      status: "pending" | "shipped" | "delivered" | "cancelled";
      since: string;
      page: { size_items: number };
    }>();
    return { status: args.status, size: args.page.size_items };
  },
});

describe("defineTool", () => {
  it("publishes a closed draft 2020-12 schema: required = fields without a default, descriptions carried", () => {
    const s = search.inputSchema as {
      $schema: string;
      additionalProperties: unknown;
      required: string[];
      properties: Record<string, Record<string, unknown>>;
    };
    expect(s.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(s.additionalProperties).toBe(false);
    expect(s.properties.page!.additionalProperties).toBe(false);
    expect(s.required).toEqual(["customer_id", "since", "page"]);
    expect(s.properties.status).toMatchObject({ default: "pending", description: "Order status to filter by." });
    expect(lintTool(search)).toEqual([]);
  });

  it("keeps the effect, and for MCP only what the effect cannot say (openWorldHint)", () => {
    expect(search.effect).toBe("read");
    expect(search.mcp).toBeUndefined();
    const closed = defineTool({
      name: "local_read",
      description: "Reads one local thing.",
      input: z.object({}).strict(),
      effect: "read",
      openWorldHint: false,
      handler: () => 1,
    });
    expect(closed.mcp).toEqual({ openWorldHint: false });
  });

  it("the handler receives the zod-parsed arguments (defaults applied)", async () => {
    const args = { customer_id: "c_7", since: "2026-03-05", page: { size_items: 5 } };
    expect(await search.check!(args, ctx)).toBeUndefined();
    expect(await search.handler(args, ctx)).toEqual({ status: "pending", size: 5 });
  });

  it("the published schema and the validator agree (unknown fields rejected)", () => {
    const r = createValidator().validate(search, {
      customer_id: "c_7",
      since: "2026-03-05",
      page: { size_items: 5 },
      limit: 500,
    });
    expect(r.ok ? [] : r.issues.map((i) => i.message)).toEqual([
      "unknown field: limit; allowed: customer_id, status, since, page",
    ]);
  });

  it("a zod date (format + pattern) fails with the one readable issue", () => {
    const r = createValidator().validate(search, { customer_id: "c_7", since: "3/5/26", page: { size_items: 1 } });
    expect(r.ok ? [] : r.issues).toEqual([
      {
        path: "/since",
        code: "invalid_format",
        message: "since must be YYYY-MM-DD",
        expected: "YYYY-MM-DD",
        received: "3/5/26",
        example: "2026-03-05",
      },
    ]);
  });

  it("zod refinements run as check issues, then the user's check sees parsed arguments", async () => {
    const seen: unknown[] = [];
    const tool = defineTool({
      name: "refund",
      description: "Refunds one order.",
      input: z.object({
        order_id: z
          .string()
          .max(20)
          .refine((v) => v.startsWith("o_"), "must start with o_")
          .describe("Order id."),
      }),
      effect: "destructive",
      check: (args) => {
        seen.push(args);
        return args.order_id === "o_404"
          ? [{ path: "/order_id", code: "not_found", message: "order_id names no order", received: args.order_id }]
          : undefined;
      },
      handler: () => "refunded",
    });
    expect(await tool.check!({ order_id: "x_1" }, ctx)).toEqual([
      { path: "/order_id", code: "custom", message: "order_id: must start with o_" },
    ]);
    expect(await tool.check!({ order_id: "o_404" }, ctx)).toEqual([
      { path: "/order_id", code: "not_found", message: "order_id names no order", received: "o_404" },
    ]);
    expect(seen).toEqual([{ order_id: "o_404" }]);
    expect(() => tool.handler({ order_id: "bad" }, ctx)).toThrow(NoEffectError);
    expect(tool.effect).toBe("destructive");
  });

  it("refuses a tool without an effect", () => {
    const def = { name: "t", description: "d", input: z.object({}), handler: () => 1 } as unknown as Parameters<
      typeof defineTool
    >[0];
    expect(() => defineTool(def)).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: tool t: effect must be one of read, idempotent, write, destructive; received nothing. Declare the side effect: read (A0), idempotent (A1), write (A2, idempotency key) or destructive (A3, key + approval).]`,
    );
    expect(() => defineTool({ ...def, effect: "delete" } as never)).toThrow(/received "delete"/);
  });

  it("refuses a tool whose published schema fails an error-level rule, listing rule, pointer, message and fix", () => {
    let err: unknown;
    try {
      defineTool({
        name: "grep",
        description: "Searches.",
        input: z.object({
          pattern: z.string().describe("Regex."),
          glob: z.string().optional().describe("File filter."),
        }),
        effect: "read",
        handler: () => [],
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ToolgateError);
    expect((err as ToolgateError).code).toBe("tool_lint");
    expect((err as Error).message).toMatchInlineSnapshot(`
      "tool grep is refused: its published schema fails 3 lint rules:
        TG002 /inputSchema/properties/glob: glob has no default and is not in required, and nothing says what a missing glob means. Fix: add "glob" to required, or give it a "default" (say in its description what the default means) (in zod: drop .optional(), or give the field .default(value), or say in .describe() what leaving it out means)
        TG003 /inputSchema/properties/pattern: property pattern is a string with no maxLength, enum, const, bounded format or anchored bounded pattern. Fix: add "maxLength" (e.g. 1024 for a path, 256 for a name), or an enum if the values are known (in zod: .max(N) on the z.string(), or z.enum([...]) when the values are known)
        TG003 /inputSchema/properties/glob: property glob is a string with no maxLength, enum, const, bounded format or anchored bounded pattern. Fix: add "maxLength" (e.g. 1024 for a path, 256 for a name), or an enum if the values are known (in zod: .max(N) on the z.string(), or z.enum([...]) when the values are known)"
    `);
  });

  it("says each refusal's fix in zod too: numbers, arrays, maps and unions", () => {
    const err = (() => {
      try {
        defineTool({
          name: "t",
          description: "Does one small thing for the tests.",
          input: z.object({
            n: z.number().describe("A count."),
            tags: z.array(z.string().max(5)).describe("Tags."),
            env: z.record(z.string().max(5), z.string().max(5)).describe("Variables."),
            pick: z
              .union([z.object({ a: z.string().max(5) }), z.object({ b: z.string().max(5) })])
              .describe("One of two."),
          }),
          effect: "read",
          handler: () => 1,
        });
      } catch (e) {
        return (e as Error).message;
      }
      return "";
    })();
    expect(err).toContain("(in zod: .min(a).max(b) on the number)");
    expect(err).toContain("(in zod: .max(N) on the z.array())");
    expect(err).toContain("(in zod: z.record(...).meta({ maxProperties: N }), or a z.object() with the keys named)");
    expect(err).toContain('(in zod: z.discriminatedUnion("kind", [...]) with a z.literal() kind in every branch)');
  });

  it("refuses types JSON Schema cannot say, and a non-zod input", () => {
    expect(() =>
      defineTool({ name: "t", description: "d", input: z.object({ at: z.date() }), effect: "read", handler: () => 1 }),
    ).toThrow(/input schema cannot be published as JSON Schema/);
    expect(() =>
      defineTool({ name: "t", description: "d", input: { type: "object" } as never, effect: "read", handler: () => 1 }),
    ).toThrow(/input must be a zod schema/);
    expect(() =>
      defineTool({ name: "t", description: "d", input: z.object({}), effect: "read", handler: "run" as never }),
    ).toThrow("tool t: handler must be a function; received string.");
  });
});
