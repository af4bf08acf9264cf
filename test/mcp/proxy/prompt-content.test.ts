import { describe, expect, it } from "vitest";
import { MAX_PROMPT_MESSAGES, MAX_PROMPT_TEXT_CHARS, rebuiltMessages } from "../../../src/mcp/proxy/prompt-content.js";

describe("rebuiltMessages (a hostile upstream's prompts/get)", () => {
  it("keeps only MCP's fields, escapes text and cuts what is too long", () => {
    const out = rebuiltMessages([
      {
        role: "user",
        content: { type: "text", text: "a\u202eb\u001b[2J\nc\t", _meta: { x: 1 }, evil: true },
        extra: 1,
      },
      { role: "assistant", content: { type: "text", text: "y".repeat(MAX_PROMPT_TEXT_CHARS + 10) } },
      { role: "root", content: { type: "image", mimeType: "image/png", data: "aGk=", junk: [1] } },
    ]);
    expect(out[0]).toEqual({ role: "user", content: { type: "text", text: "a\\u{202E}b\\u{001B}[2J\nc\t" } });
    expect((out[1]!.content as { text: string }).text.length).toBe(MAX_PROMPT_TEXT_CHARS);
    expect(out[2]).toEqual({ role: "user", content: { type: "image", mimeType: "image/png", data: "aGk=" } });
  });

  it("replaces wrong types, unknown kinds and deep nesting by a text saying so", () => {
    let deep: unknown = {};
    for (let i = 0; i < 10_000; i++) deep = { content: deep };
    const out = rebuiltMessages([
      { role: "user", content: { type: "text", text: 42 } },
      { role: "user", content: { type: "image", mimeType: "text/html", data: "x" } },
      { role: "user", content: { type: "audio", mimeType: "audio/wav", data: "not base64!" } },
      { role: "user", content: { type: "resource_link", uri: "", name: "n" } },
      { role: "user", content: { type: "resource", resource: { uri: "file:///a", blob: 5 } } },
      { role: "user", content: { type: "script" } },
      deep,
      "nonsense",
    ]);
    for (const m of out) expect((m.content as { text: string }).text).toMatch(/^\[toolgate left out a content block: /);
    expect(rebuiltMessages({ not: "an array" })).toEqual([]);
  });

  it("rebuilds links and embedded resources, and bounds the message count", () => {
    const out = rebuiltMessages([
      { role: "user", content: { type: "resource_link", uri: "file:///a", name: "a", title: "T", size: 3, x: 1 } },
      { role: "user", content: { type: "resource", resource: { uri: "file:///b", text: "t\u200b", _meta: {} } } },
      { role: "user", content: { type: "resource_link", uri: "file:///c", name: "c", title: "T\u2066" } },
      { role: "user", content: { type: "resource_link", uri: "file:///d", name: "d", size: "big" } },
      { role: "user", content: { type: "resource_link", uri: "not a uri", name: "e" } },
      { role: "user", content: { type: "image", mimeType: "image/png", data: "aGk" } },
    ]);
    expect(out[0]!.content).toEqual({ type: "resource_link", uri: "file:///a", name: "a", title: "T", size: 3 });
    expect(out[1]!.content).toEqual({ type: "resource", resource: { uri: "file:///b", text: "t\\u{200B}" } });
    // Checked as a tool's links and media are: an invisible character, a size that is no number of
    // bytes, a relative URI or unpadded base64 leaves the block out, saying which field.
    expect(out.slice(2).map((m) => (m.content as { text: string }).text)).toEqual([
      "[toolgate left out a content block: the resource link has a title that is not a string of at most 256 printable characters]",
      "[toolgate left out a content block: the resource link has a size that is not a whole number of bytes]",
      "[toolgate left out a content block: the resource link has a uri that is not an absolute URI of at most 2048 characters]",
      "[toolgate left out a content block: the image has data that is not base64 (RFC 4648, padded)]",
    ]);
    const many = rebuiltMessages(
      Array.from({ length: MAX_PROMPT_MESSAGES + 5 }, () => ({ role: "user", content: { type: "text", text: "x" } })),
    );
    expect(many).toHaveLength(MAX_PROMPT_MESSAGES + 1);
    expect((many.at(-1)!.content as { text: string }).text).toContain("left out 5 further messages");
  });
});
