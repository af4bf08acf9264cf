/**
 * The reader of an `mcpServers` file. VS Code's `mcp.json` is JSON with comments and trailing
 * commas, and JSON.parse keeps the last of two equal keys without a word, so a server written
 * twice would silently lose one entry: this parser accepts comments and trailing commas, reports
 * every repeated key by its JSON Pointer, and names the line and column of a syntax error.
 */
import { join } from "../../core/pointer.js";

export interface JsoncResult {
  value: unknown;
  /** JSON Pointers of keys written more than once in one object (the later one wins, as in JSON.parse). */
  duplicates: string[];
}

export class JsoncSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`line ${line}, column ${column}: ${message}`);
    this.name = "JsoncSyntaxError";
  }
}

/** How deep objects and arrays may nest: a config is shallow, and a hostile file must not exhaust the stack. */
const MAX_DEPTH = 64;

export function parseJsonc(text: string): JsoncResult {
  let i = 0;
  const duplicates: string[] = [];

  const fail = (message: string): never => {
    const before = text.slice(0, i);
    const line = before.split("\n").length;
    const column = i - before.lastIndexOf("\n");
    throw new JsoncSyntaxError(message, line, column);
  };

  const skip = (): void => {
    for (;;) {
      const c = text[i];
      if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\ufeff") i++;
      else if (c === "/" && text[i + 1] === "/") {
        while (i < text.length && text[i] !== "\n") i++;
      } else if (c === "/" && text[i + 1] === "*") {
        const end = text.indexOf("*/", i + 2);
        if (end < 0) fail("a /* comment is not closed with */");
        i = end + 2;
      } else return;
    }
  };

  const string = (): string => {
    // JSON forbids raw control characters inside a string.
    // eslint-disable-next-line no-control-regex
    const m = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(text.slice(i, i + (1 << 20)));
    if (!m) fail("a string is not closed, or holds a raw control character or an unknown escape");
    i += m![0].length;
    return JSON.parse(m![0]) as string;
  };

  const value = (pointer: string, depth: number): unknown => {
    if (depth > MAX_DEPTH) fail(`nested deeper than ${MAX_DEPTH} levels`);
    skip();
    const c = text[i];
    if (c === "{") return object(pointer, depth);
    if (c === "[") return array(pointer, depth);
    if (c === '"') return string();
    const m = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    if (!m) fail(c === undefined ? "the file ends where a value was expected" : `unexpected ${JSON.stringify(c)}`);
    i += m![0].length;
    return JSON.parse(m![0]) as unknown;
  };

  const object = (pointer: string, depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    i++;
    for (;;) {
      skip();
      if (text[i] === "}") {
        i++;
        return { ...out };
      }
      if (text[i] !== '"') fail('expected a key in double quotes or "}"');
      const key = string();
      skip();
      if (text[i] !== ":") fail(`expected ":" after the key ${JSON.stringify(key)}`);
      i++;
      const at = join(pointer, key);
      if (Object.prototype.hasOwnProperty.call(out, key)) duplicates.push(at);
      out[key] = value(at, depth + 1);
      skip();
      if (text[i] === ",") i++;
      else if (i >= text.length) fail('the file ends before an object is closed with "}"');
      else if (text[i] !== "}") fail('expected "," or "}" after a value');
    }
  };

  const array = (pointer: string, depth: number): unknown[] => {
    const out: unknown[] = [];
    i++;
    for (;;) {
      skip();
      if (text[i] === "]") {
        i++;
        return out;
      }
      out.push(value(join(pointer, out.length), depth + 1));
      skip();
      if (text[i] === ",") i++;
      else if (i >= text.length) fail('the file ends before an array is closed with "]"');
      else if (text[i] !== "]") fail('expected "," or "]" after a value');
    }
  };

  const result = value("", 0);
  skip();
  if (i < text.length) fail("more text after the end of the JSON value");
  return { value: result, duplicates };
}
