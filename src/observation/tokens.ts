/**
 * Token counting for budgets and catalog arithmetic. o200k (GPT-4o family) is the default;
 * cl100k is offered for older models. Encoders load lazily: the root import stays light.
 *
 * o200k counts of ASCII text (most observations, every audit line) take a fast path with the
 * same result: the text is cut into the encoder's own pieces by hand (`o200k-ascii.ts`) and each
 * piece's count, which does not depend on its neighbours, is remembered, so a repeated word,
 * key or line frame costs a map lookup instead of a run of the Unicode regex and the encoder.
 */
import { createRequire } from "node:module";
import { isAscii, pieceEnd } from "./o200k-ascii.js";

export type TokenizerName = "o200k" | "cl100k";

interface Encoding {
  encode(text: string, options?: { disallowedSpecial?: Set<string> }): number[];
  /** Same pieces and merges as `encode`, counted without building the token array. */
  countTokens(text: string, options?: { disallowedSpecial?: Set<string> }): number;
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
  if (tokenizer === "o200k" && isAscii(text)) return countAsciiO200k(text);
  return encoding(tokenizer).countTokens(text, AS_TEXT);
}

/** Pieces remembered with their o200k count; cleared when full. Longer pieces are counted each time. */
const PIECE_CACHE_MAX = 16_384;
const PIECE_CACHE_LENGTH = 64;
const pieceCounts = new Map<string, number>();

function countAsciiO200k(text: string): number {
  const enc = encoding("o200k");
  let total = 0;
  for (let i = 0; i < text.length; ) {
    const end = pieceEnd(text, i);
    const piece = text.slice(i, end);
    let n = pieceCounts.get(piece);
    if (n === undefined) {
      // A piece encodes alone exactly as it does in place: the encoder splits it back into itself.
      n = enc.countTokens(piece, AS_TEXT);
      if (piece.length <= PIECE_CACHE_LENGTH) {
        if (pieceCounts.size >= PIECE_CACHE_MAX) pieceCounts.clear();
        pieceCounts.set(piece, n);
      }
    }
    total += n;
    i = end;
  }
  return total;
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
