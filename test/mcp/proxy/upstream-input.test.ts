/**
 * `checkedInputRequests`: every field of an upstream task's input requests checked and bounded,
 * each refusal naming the field, what was expected and what arrived; and `cannotAsk`, which
 * says which capability a 2025-11-25 client lacks for a question.
 */
import { describe, expect, it } from "vitest";
import { askedBy, checkedInputRequests, MAX_BYTES, MAX_REQUESTS } from "../../../src/mcp/proxy/upstream-input.js";
import { cannotAsk } from "../../../src/mcp/server/call-ask.js";

const form = (extra: Record<string, unknown> = {}) => ({
  method: "elicitation/create",
  params: { mode: "form", message: "Which branch?", requestedSchema: { type: "object" }, ...extra },
});
const sampling = (extra: Record<string, unknown> = {}) => ({
  method: "sampling/createMessage",
  params: { messages: [], maxTokens: 10, ...extra },
});
let nested: unknown = {};
for (let i = 0; i < 20; i++) nested = { a: nested };

describe("an upstream task's input requests", () => {
  it("passes a form, a url elicitation (mode absent is form) and a sampling request on as they came", () => {
    const raw = {
      a: form(),
      b: { method: "elicitation/create", params: { mode: "url", message: "Sign in", url: "https://x.test" } },
      c: { method: "elicitation/create", params: { message: "m", requestedSchema: {} } },
      d: sampling(),
    };
    expect(checkedInputRequests(raw, "r")).toEqual(raw);
  });

  it("shows an elicitation message's control, bidi and invisible characters instead of passing them on", () => {
    const raw = { a: form({ message: "Approve?\n\u001b[2J\u202Edenied" }) };
    const checked = checkedInputRequests(raw, "r");
    expect((checked.a!.params as { message: string }).message).toBe("Approve?\n\\u{001B}[2J\\u{202E}denied");
  });

  it("shows the control, bidi and invisible characters of a form's titles, descriptions and enum names, at any depth", () => {
    const requestedSchema = {
      type: "object",
      title: "Sign\u202Ein",
      properties: {
        branch: { type: "string", description: "which\u001b[8m branch", default: "ma\u200Bin" },
        choice: {
          type: "string",
          enum: ["a\u202E"],
          enumNames: ["A\u202E"],
          oneOf: [{ const: "a", title: "\u2066A" }],
        },
      },
    };
    const shown = checkedInputRequests({ a: form({ requestedSchema }) }, "r").a!.params.requestedSchema as {
      title: string;
      properties: Record<string, Record<string, unknown>>;
    };
    expect(shown.title).toBe("Sign\\u{202E}in");
    expect(shown.properties.branch!.description).toBe("which\\u{001B}[8m branch");
    expect(shown.properties.choice!.enumNames).toEqual(["A\\u{202E}"]);
    expect(shown.properties.choice!.oneOf).toEqual([{ const: "a", title: "\\u{2066}A" }]);
    // Values the client sends back are left as they are: the upstream checks its own.
    expect(shown.properties.branch!.default).toBe("ma\u200Bin");
    expect(shown.properties.choice!.enum).toEqual(["a\u202E"]);
  });

  it("refuses a nesting far deeper than the bound without serialising it", () => {
    let deep: unknown = {};
    for (let i = 0; i < 200_000; i++) deep = { a: deep };
    expect(() => checkedInputRequests({ a: form({ requestedSchema: deep }) }, "r")).toThrow("levels deep");
  });

  it.each([
    ["a string", 'r must be an object of input requests by key; received "a string"'],
    [{}, `r must hold 1 to ${MAX_REQUESTS} input requests; received 0`],
    [
      Object.fromEntries(Array.from({ length: MAX_REQUESTS + 1 }, (_, i) => [`k${i}`, form()])),
      `r must hold 1 to ${MAX_REQUESTS} input requests; received ${MAX_REQUESTS + 1}`,
    ],
    [{ a: form({ requestedSchema: { pad: "x".repeat(MAX_BYTES) } }) }, `r must be at most ${MAX_BYTES} bytes of JSON`],
    [{ a: form({ requestedSchema: nested }) }, "r must be nested at most 16 levels deep"],
    [{ "a b": form() }, 'r keys must be 1 to 256 printable ASCII characters without spaces; received "a b"'],
    [{ a: 7 }, 'r["a"] must be an object {method, params}; received 7'],
    [
      { a: { method: "tools/call", params: {} } },
      'r["a"].method must be one of elicitation/create, sampling/createMessage; received "tools/call"',
    ],
    [{ a: { method: "elicitation/create", params: [] } }, 'r["a"].params must be an object'],
    [{ a: form({ message: 5 }) }, 'r["a"].params.message must be a string of at most 4000 characters; received 5'],
    [{ a: form({ message: "x".repeat(4_001) }) }, "received 4001 characters"],
    [
      { a: form({ requestedSchema: "s" }) },
      'r["a"].params.requestedSchema must be an object (a form\'s schema); received "s"',
    ],
    [{ a: form({ mode: "url" }) }, 'r["a"].params.url must be a string; received'],
    [{ a: form({ mode: "voice" }) }, 'r["a"].params.mode must be "form" or "url"; received "voice"'],
    [
      { a: form({ mode: "url", url: "javascript:alert(1)" }) },
      'r["a"].params.url must be an absolute http or https URL',
    ],
    [{ a: form({ mode: "url", url: "/relative" }) }, 'r["a"].params.url must be an absolute http or https URL'],
    [{ a: form({ mode: "url", url: "https://x.test/\u202Eevil" }) }, "with no control, bidi or invisible character"],
    [{ a: form({ mode: "url", url: `https://x.test/${"a".repeat(2_048)}` }) }, "of at most 2048 characters"],
    [{ a: sampling({ messages: "hi" }) }, 'r["a"].params.messages must be an array; received "hi"'],
    [{ a: sampling({ maxTokens: 0 }) }, 'r["a"].params.maxTokens must be a positive integer; received 0'],
  ])("refuses %j, naming the field", (raw, expected) => {
    expect(() => checkedInputRequests(raw, "r")).toThrow(expected);
  });
});

describe("what a 2025-11-25 client can be asked", () => {
  it.each([
    [{ elicitation: {} }, "elicitation/create", "form", null],
    [{ elicitation: { form: {} } }, "elicitation/create", undefined, null],
    [{ elicitation: { url: {} } }, "elicitation/create", "url", null],
    [{}, "elicitation/create", "form", 'it declared no "elicitation" capability'],
    [
      { elicitation: { form: {} } },
      "elicitation/create",
      "url",
      'it declared no "elicitation": {"url": {}} capability',
    ],
    [
      { elicitation: { url: {} } },
      "elicitation/create",
      "form",
      'it declared no "elicitation": {"form": {}} capability',
    ],
    [{ sampling: {} }, "sampling/createMessage", undefined, null],
    [{}, "sampling/createMessage", undefined, 'it declared no "sampling" capability'],
    [{ elicitation: {} }, "roots/list", undefined, '"roots/list" is not a question a client is asked'],
  ])("%j, %s (%s)", (caps, method, mode, expected) => {
    const why = cannotAsk(caps, method, mode);
    if (expected === null) expect(why).toBeNull();
    else expect(why).toContain(expected);
  });
});

describe("who asks", () => {
  it("an elicitation's message begins by naming its upstream; a long name is cut; a sampling request is left as it is", () => {
    const asked = askedBy(form(), "files");
    expect(asked.params.message).toBe('The MCP server "files" asks: Which branch?');
    expect(asked.params.requestedSchema).toEqual({ type: "object" });
    expect(askedBy(form(), "n".repeat(100)).params.message).toBe(
      `The MCP server "${"n".repeat(64)}…" asks: Which branch?`,
    );
    expect(askedBy(sampling(), "files")).toEqual(sampling());
  });
});
