/**
 * Token counting for budgets and catalog arithmetic. o200k (GPT-4o family) is the default;
 * cl100k is offered for older models. Encoders load lazily: the root import stays light.
 */
import { createRequire } from "node:module";

export type TokenizerName = "o200k" | "cl100k";

interface Encoding {
  encode(text: string, options?: { disallowedSpecial?: Set<string> }): number[];
  decode(tokens: number[]): string;
}

const require = createRequire(import.meta.url);
const loaded = new Map<TokenizerName, Encoding>();
// Tool output is data: text that looks like a special token is counted as ordinary text.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

function encoding(name: TokenizerName): Encoding {
  let enc = loaded.get(name);
  if (!enc) {
    // The CommonJS build is loaded synchronously so counting stays a plain function.
    enc = require(name === "o200k" ? "gpt-tokenizer/cjs/encoding/o200k_base" : "gpt-tokenizer/cjs/encoding/cl100k_base") as Encoding;
    loaded.set(name, enc);
  }
  return enc;
}

/** Number of tokens `text` encodes to. Special-token text is counted as ordinary text. */
export function countTokens(text: string, tokenizer: TokenizerName = "o200k"): number {
  if (text.length === 0) return 0;
  return encoding(tokenizer).encode(text, AS_TEXT).length;
}

/** Token ids of `text` (for cutting at a token boundary). */
export function encodeTokens(text: string, tokenizer: TokenizerName = "o200k"): number[] {
  return encoding(tokenizer).encode(text, AS_TEXT);
}

export function decodeTokens(tokens: number[], tokenizer: TokenizerName = "o200k"): string {
  return encoding(tokenizer).decode(tokens);
}

export function isTokenizerName(value: string): value is TokenizerName {
  return value === "o200k" || value === "cl100k";
}
