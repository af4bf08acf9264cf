/**
 * Token counting for budgets and catalog arithmetic. o200k (GPT-4o family) is the default;
 * cl100k is offered for older models. Encoders load lazily: the root import stays light.
 *
 * Text reaches the encoder piece by piece (`pieces.ts`): pieces are found in one pass, a piece
 * longer than `MAX_PIECE_LENGTH` goes in chunks, so counting, encoding and decoding are linear
 * in the text whatever it holds. Each short piece's count and ids, which do not depend on its
 * neighbours, are remembered, so a repeated word, key or line frame costs a map lookup.
 *
 * Linear is not free: text the caches do not know (random letters, rare CJK) costs about a
 * microsecond per byte. Callers that may see text of any size count a bounded part of it:
 * `countTokensUpTo` stops past a limit, `countTokensBounded` estimates beyond a prefix.
 */
import { createRequire } from "node:module";
import { LruCache } from "../core/lru.js";
import { forEachPiece, MAX_PIECE_LENGTH, type TokenizerName } from "./pieces.js";
import { isAscii, pieceEnd } from "./o200k-ascii.js";

export type { TokenizerName } from "./pieces.js";

interface Encoding {
  encode(text: string, options?: { disallowedSpecial?: Set<string> }): number[];
  decode(tokens: Iterable<number>): string;
  setMergeCacheSize(size: number): void;
}

const require = createRequire(import.meta.url);
// Tool output is data: text that looks like a special token is counted as ordinary text.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Pieces remembered with their token ids, per tokenizer (an `LruCache`). Chunks of a long run
 * are remembered too (a run of one character is one chunk over and over): at most 16,384 ×
 * 256 characters.
 */
const PIECE_CACHE_MAX = 16_384;

/** A loaded encoder and its piece cache. */
interface Loaded {
  name: TokenizerName;
  enc: Encoding;
  ids: LruCache<string, number[]>;
  /**
   * The ids of each one-character ASCII piece, by char code, once encoded: a third of the pieces
   * of an observation's frame (`:`, `-`, `\n`, a hex digit of its fence tag), read without a map lookup.
   */
  ascii: Array<number[] | undefined>;
}
const loaded = new Map<TokenizerName, Loaded>();

function load(name: TokenizerName): Loaded {
  let tk = loaded.get(name);
  if (!tk) {
    // The CommonJS build is loaded synchronously so counting stays a plain function.
    const enc = require(
      name === "o200k" ? "gpt-tokenizer/cjs/encoding/o200k_base" : "gpt-tokenizer/cjs/encoding/cl100k_base",
    ) as Encoding;
    // The encoder's own cache keeps every piece it merged (100,000 by default, each up to a chunk
    // long); the short, repeated ones are remembered here, so a small one is enough.
    enc.setMergeCacheSize(4096);
    tk = { name, enc, ids: new LruCache(PIECE_CACHE_MAX), ascii: new Array<number[] | undefined>(128) };
    loaded.set(name, tk);
  }
  return tk;
}

/** UTF-8 bytes handed to the encoder so far (pieces not in the cache): what a bounded walk limits. */
let encodedBytes = 0;

/** The token ids of one piece (at most a chunk long): it encodes alone exactly as it does in place. */
function idsOf(tk: Loaded, piece: string): number[] {
  if (piece.length === 1) {
    const code = piece.charCodeAt(0);
    if (code < 128) {
      let one = tk.ascii[code];
      if (one === undefined) {
        encodedBytes += 1;
        one = tk.ascii[code] = tk.enc.encode(piece, AS_TEXT);
      }
      return one;
    }
  }
  let ids = tk.ids.get(piece);
  if (ids === undefined) {
    encodedBytes += Buffer.byteLength(piece, "utf8");
    ids = tk.enc.encode(piece, AS_TEXT);
    tk.ids.set(piece, ids);
  }
  return ids;
}

/**
 * Loads the encoder now (a few hundred ms on a busy machine), so the first call that counts does
 * not pay for it: a server calls this once it is up, before its first call comes in.
 */
export function preloadTokenizer(tokenizer: TokenizerName = "o200k"): void {
  load(tokenizer);
}

/** Number of tokens `text` encodes to (`encodeTokens(text).length`). Special-token text is counted as ordinary text. */
export function countTokens(text: string, tokenizer: TokenizerName = "o200k"): number {
  if (text.length === 0) return 0;
  const tk = load(tokenizer);
  if (tokenizer === "o200k" && isAscii(text)) return countAscii(tk, text);
  let total = 0;
  forEachPiece(text, tokenizer, (piece) => void (total += idsOf(tk, piece).length));
  return total;
}

/**
 * The o200k count of ASCII `text`: the pieces `forEachPiece` finds in it (`pieceEnd`, long runs
 * cut at `MAX_PIECE_LENGTH`), counted in one loop without a callback per piece.
 */
function countAscii(tk: Loaded, text: string): number {
  let total = 0;
  for (let at = 0; at < text.length;) {
    const end = pieceEnd(text, at, MAX_PIECE_LENGTH);
    total += idsOf(tk, text.slice(at, end)).length;
    at = end;
  }
  return total;
}

/** Token ids of `text` (for cutting at a token boundary); `decodeTokens` turns them back into `text`. */
export function encodeTokens(text: string, tokenizer: TokenizerName = "o200k"): number[] {
  const tk = load(tokenizer);
  const out: number[] = [];
  forEachPiece(text, tokenizer, (piece) => {
    for (const id of idsOf(tk, piece)) out.push(id);
  });
  return out;
}

/**
 * The text of `tokens`. A slice that ends inside a character (its bytes split between tokens)
 * ends in U+FFFD; one that starts inside one starts with U+FFFD.
 */
export function decodeTokens(tokens: number[], tokenizer: TokenizerName = "o200k"): string {
  const { enc } = load(tokenizer);
  // The encoder decodes through one streaming decoder shared by every call; bytes a previous
  // call left in it (a split character) would otherwise start this text, and ours the next one.
  flushDecoder();
  // In slices: the encoder's decode copies its byte buffer once per byte-level token, quadratic
  // on a long run of them. The streaming decoder carries a character split between two slices
  // (the token after the split holds its remaining bytes, so it is byte-level too).
  let out = "";
  for (let i = 0; i < tokens.length; i += DECODE_SLICE) out += enc.decode(tokens.slice(i, i + DECODE_SLICE));
  return out + flushDecoder();
}

const DECODE_SLICE = 64;
const { decoder } = require("gpt-tokenizer/cjs/BytePairEncodingCore") as { decoder: { decode(): string } };
const flushDecoder = (): string => decoder.decode();

/** Where a bounded walk over a text stops: once any limit is passed, after the piece that passed it. */
export interface WalkLimits {
  /** More than this many tokens. */
  tokens?: number;
  /** This many characters read. */
  chars?: number;
  /**
   * This many UTF-8 bytes handed to the encoder: pieces not in the cache, the part that costs
   * (one to two microseconds a byte for text never seen; a cached piece is a map lookup).
   */
  encoded?: number;
}

/**
 * The bounds of one counting step over text of unknown size: any text, however hostile, is read
 * in well under 50 ms of one core (bench/tokens.bench.ts measures the worst).
 */
export const STEP_LIMITS: Readonly<Required<Omit<WalkLimits, "tokens">>> = { chars: 131_072, encoded: 8192 };

/** How far a bounded walk over a text went. */
export interface TokenPrefix {
  /** Token ids of `text.slice(0, end)`: exactly the first tokens of the whole text. */
  ids: number[];
  /** Offset reached, at a piece boundary; `text.length` when the whole text was read. */
  end: number;
}

/**
 * Encodes `text` from its start until a limit is passed. `end === text.length` means the whole
 * text was read (then `ids.length <= limits.tokens` says it has at most that many tokens). The
 * work is bounded by the limits (a token is at most 128 bytes), not by the text.
 */
export function encodeTokensUpTo(text: string, limits: WalkLimits, tokenizer: TokenizerName = "o200k"): TokenPrefix {
  const ids: number[] = [];
  const end = walk(text, load(tokenizer), limits, (piece) => {
    for (const id of piece) ids.push(id);
    return ids.length;
  });
  return { ids, end };
}

/** `countTokens`, or a number above `limit` once the text is surely over it; reads at most `limit` tokens' worth of
 * text. */
export function countTokensUpTo(text: string, limit: number, tokenizer: TokenizerName = "o200k"): number {
  let total = 0;
  walk(text, load(tokenizer), { tokens: limit }, (piece) => (total += piece.length));
  return total;
}

/**
 * Walks `text` piece by piece under `limits`, handing each piece's ids to `take`, which returns
 * the tokens taken so far. Returns the offset reached.
 */
function walk(text: string, tk: Loaded, limits: WalkLimits, take: (ids: number[]) => number): number {
  const { tokens = Infinity, chars = Infinity, encoded = Infinity } = limits;
  const encodedBefore = encodedBytes;
  let read = 0;
  return forEachPiece(
    text,
    tk.name,
    (piece) => {
      const taken = take(idsOf(tk, piece));
      read += piece.length;
      return taken > tokens || read >= chars || encodedBytes - encodedBefore >= encoded;
    },
    reachOf(chars, tokens),
  );
}

/** How far a walk stopped by these limits can get: a token is at most 128 characters (o200k's longest, a run of
 * spaces). */
const reachOf = (chars: number, tokens: number): number => Math.min(chars, (tokens + 2) * 128);

/** A token figure that may be an estimate. */
export interface BoundedCount {
  tokens: number;
  /** False when the text was too long (or too costly) to count whole within the limits, and the rest was estimated. */
  exact: boolean;
}

const SAMPLES = 32;
const SAMPLE_CHARS = 64;

/**
 * The token count of a text of any size in bounded work: exact when the whole text can be read
 * within `limits`; otherwise what was read (nothing, when the text is longer than `limits.chars`)
 * is counted exactly and the rest at the rate (tokens per character) of thirty-two samples spread
 * evenly over it, each some 64 characters of whole
 * pieces (a sample's cut first piece is skipped), rounded up. The samples, not the part read,
 * give the rate, so a text cannot make its rest look cheaper by what it starts with. The work
 * is the limits plus some 32 samples of up to 128 characters (and one native pass to see if the text is ASCII).
 */
export function countTokensBounded(
  text: string,
  limits: WalkLimits = STEP_LIMITS,
  tokenizer: TokenizerName = "o200k",
): BoundedCount {
  const tk = load(tokenizer);
  // An ASCII text no longer than the step's encoding bound cannot pass any of its limits (a byte
  // a character, a token at least one): the common audit line, counted whole in one loop.
  if (tokenizer === "o200k" && limits === STEP_LIMITS && text.length <= STEP_LIMITS.encoded && isAscii(text))
    return { tokens: countAscii(tk, text), exact: true };
  let tokens = 0;
  // A text longer than the walk may read cannot be counted whole: the samples alone estimate it.
  const end = text.length <= (limits.chars ?? Infinity) ? walk(text, tk, limits, (ids) => (tokens += ids.length)) : 0;
  if (end === text.length) return { tokens, exact: true };
  const rest = text.length - end;
  const step = rest / SAMPLES;
  let sampled = 0;
  let sampledChars = 0;
  for (let k = 0; k < SAMPLES; k++) {
    let from = end + Math.floor(k * step);
    if (isLowSurrogate(text.charCodeAt(from))) from++;
    // A window long enough for the sample's pieces after the first (a piece is at most MAX_PIECE_LENGTH).
    const window = text.slice(from, Math.min(text.length, from + SAMPLE_CHARS + 2 * MAX_PIECE_LENGTH));
    let first = true;
    let chars = 0;
    forEachPiece(
      window,
      tokenizer,
      (piece) => {
        if (first) return void (first = false);
        // A chunk of a long run is sampled by its start: its rate is the run's, for less work.
        const part =
          piece.length <= 2 * SAMPLE_CHARS
            ? piece
            : piece.slice(
                0,
                isHighSurrogate(piece.charCodeAt(2 * SAMPLE_CHARS - 1)) ? 2 * SAMPLE_CHARS - 1 : 2 * SAMPLE_CHARS,
              );
        sampled += idsOf(tk, part).length;
        chars += part.length;
        return chars >= SAMPLE_CHARS;
      },
      SAMPLE_CHARS + MAX_PIECE_LENGTH,
    );
    sampledChars += chars;
  }
  // A rest made of one run has no whole piece after the first in a window: then the part read gives the rate.
  if (sampledChars === 0 && end > 0) return { tokens: tokens + Math.ceil((rest * tokens) / end), exact: false };
  if (sampledChars === 0) return { tokens: Math.ceil(Buffer.byteLength(text, "utf8") / 4), exact: false };
  return { tokens: tokens + Math.ceil((rest * sampled) / sampledChars), exact: false };
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

export function isTokenizerName(value: string): value is TokenizerName {
  return value === "o200k" || value === "cl100k";
}
