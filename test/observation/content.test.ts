import { describe, expect, it } from "vitest";
import { boundContent, MAX_CONTENT_PARTS, MAX_MEDIA_BYTES, MAX_URI_CHARS } from "../../src/observation/content.js";
import { createRedactor } from "../../src/observation/redact.js";

const none = createRedactor([]);
// A 1×1 transparent PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const image = { type: "image", mime_type: "image/png", data: PNG };

describe("content parts beside a result's text", () => {
  it("passes images, sounds and links on in order and names each in a line of the text", () => {
    const sound = { type: "audio", mime_type: "audio/wav", data: "UklGRg==" };
    const link = {
      type: "link",
      uri: "file:///ws/report.pdf",
      name: "report.pdf",
      title: "Q3 report",
      description: "The quarterly figures.",
      mime_type: "application/pdf",
      size: 48213,
    };
    expect(boundContent([image, sound, link], none)).toEqual({
      parts: [image, sound, link],
      lines: [
        "[image image/png, 70 bytes, attached]",
        "[audio audio/wav, 4 bytes, attached]",
        '[link "report.pdf": file:///ws/report.pdf (application/pdf, 48,213 bytes)]',
      ],
    });
    expect(boundContent(undefined, none)).toEqual({ parts: [], lines: [] });
    expect(boundContent([], none)).toEqual({ parts: [], lines: [] });
  });

  it("leaves out each malformed part, saying which and why, and keeps the others", () => {
    const cases: Array<[unknown, string]> = [
      ["a string", "it is not an image, audio or link part"],
      [null, "it is not an image, audio or link part"],
      [{ type: "video", mime_type: "video/mp4", data: "AAAA" }, "it is not an image, audio or link part"],
      [{ ...image, mime_type: "audio/wav" }, "the image has a mime_type that is not an image/… media type"],
      [{ ...image, mime_type: "image/" }, "the image has a mime_type that is not an image/… media type"],
      [{ ...image, mime_type: 7 }, "the image has a mime_type that is not an image/… media type"],
      [{ ...image, data: "" }, "the image has no base64 data"],
      [{ ...image, data: "not base64!" }, "the image has data that is not base64 (RFC 4648, padded)"],
      [{ ...image, data: "abc" }, "the image has data that is not base64 (RFC 4648, padded)"],
      [
        { type: "link", uri: "relative/path", name: "x" },
        "the link has a uri that is not an absolute URI of at most 2048 characters",
      ],
      [
        { type: "link", uri: "https://a.example/x y", name: "x" },
        "the link has a uri that is not an absolute URI of at most 2048 characters",
      ],
      [
        { type: "link", uri: `https://a.example/${"x".repeat(MAX_URI_CHARS)}`, name: "x" },
        "the link has a uri that is not an absolute URI of at most 2048 characters",
      ],
      [
        { type: "link", uri: "https://a.example/", name: "" },
        "the link has a name that is not 1–256 printable characters",
      ],
      [
        { type: "link", uri: "https://a.example/", name: "line\nbreak" },
        "the link has a name that is not 1–256 printable characters",
      ],
      [
        { type: "link", uri: "https://a.example/", name: "x", description: "hidden\u202etext" },
        "the link has a description that is not a string of at most 1024 printable characters",
      ],
      [
        { type: "link", uri: "https://a.example/", name: "x", title: 3 },
        "the link has a title that is not a string of at most 256 printable characters",
      ],
      [
        { type: "link", uri: "https://a.example/", name: "x", mime_type: "pdf" },
        "the link has a mime_type that is not type/subtype",
      ],
      [
        { type: "link", uri: "https://a.example/", name: "x", size: -1 },
        "the link has a size that is not a whole number of bytes",
      ],
      [
        { type: "link", uri: "https://a.example/", name: "x", size: 1.5 },
        "the link has a size that is not a whole number of bytes",
      ],
    ];
    for (const [part, why] of cases) {
      expect(boundContent([part, image], none)).toEqual({
        parts: [image],
        lines: [`[toolgate left out content part 1: ${why}]`, "[image image/png, 70 bytes, attached]"],
      });
    }
    expect(boundContent({ type: "image" }, none)).toEqual({
      parts: [],
      lines: ["[toolgate left out the result's content: it was not a list of parts]"],
    });
  });

  it("passes at most 16 parts and 2 MiB of media, and says what it left out", () => {
    const many = boundContent(
      Array.from({ length: 20 }, () => image),
      none,
    );
    expect(many.parts).toHaveLength(MAX_CONTENT_PARTS);
    expect(many.lines.at(-1)).toBe("[toolgate left out content parts 17–20: a result passes on at most 16]");
    expect(many.lines).toHaveLength(MAX_CONTENT_PARTS + 1);

    // Two images of 1.5 MiB each: the first fits, the second would pass the bound.
    const big = { type: "image", mime_type: "image/jpeg", data: "A".repeat((1.5 * 1024 * 1024 * 4) / 3) };
    const two = boundContent([big, big, image], none);
    expect(two.parts).toEqual([big, image]);
    expect(two.lines[1]).toBe(
      "[toolgate left out content part 2: the image (image/jpeg, 1,572,864 bytes) would take the result's media past 2,097,152 bytes]",
    );
    // One part over the whole bound is refused before its data is read.
    const huge = { type: "audio", mime_type: "audio/ogg", data: "!".repeat((MAX_MEDIA_BYTES / 3) * 4 + 8) };
    expect(boundContent([huge], none).lines).toEqual([
      "[toolgate left out content part 1: the audio is over the 2,097,152 bytes of media a result passes on]",
    ]);
  });

  it("redacts configured secrets from a link's strings, never from media bytes", () => {
    const r = createRedactor(["sk_live_123456"]);
    const link = { type: "link", uri: "https://a.example/?key=sk_live_123456", name: "sk_live_123456.txt" };
    expect(boundContent([link], r)).toEqual({
      parts: [{ type: "link", uri: "https://a.example/?key=[REDACTED]", name: "[REDACTED].txt" }],
      lines: ['[link "[REDACTED].txt": https://a.example/?key=[REDACTED]]'],
    });
  });

  it("never throws, whatever the parts hold", () => {
    const hostile = {
      type: "link",
      get uri(): string {
        throw new Error("boom");
      },
      name: "x",
    };
    expect(boundContent([hostile, Object.create(null), [image], 1n, image], none)).toEqual({
      parts: [image],
      lines: [
        "[toolgate left out content part 1: reading it threw]",
        "[toolgate left out content part 2: it is not an image, audio or link part]",
        "[toolgate left out content part 3: it is not an image, audio or link part]",
        "[toolgate left out content part 4: it is not an image, audio or link part]",
        "[image image/png, 70 bytes, attached]",
      ],
    });
  });
});
