/**
 * Token counting on hostile text, and the longest synchronous step a hostile call can cause.
 * - countTokens on long unbroken runs (dots, letters, CJK), text never seen before and 1 MB of
 *   mixed text, against the counting toolgate had before pieces were bounded (long pieces whole
 *   to the encoder, non-ASCII text whole): the peer is quadratic, so its inputs stay small
 *   enough to finish in seconds.
 * - The worst single step, each over several fresh hostile inputs (no cache helps): the audit
 *   counting one call's 1 MB argument, cutting 10 MB to the default budget, and a whole refused
 *   gateway call. Goal ≤ 50 ms: no call holds the event loop longer. The figure is CPU time
 *   (on a shared machine wall time is CPU time plus waiting for a core); the note has the wall.
 */
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import type { Harness } from "./harness.js";
import { countTokens } from "../src/observation/tokens.js";
import { isAscii, pieceEnd } from "../src/observation/o200k-ascii.js";
import { fitText } from "../src/observation/budget.js";
import { completeRecord } from "../src/runtime/audit.js";
import { createGateway } from "../src/runtime/gateway.js";
import { createMemoryStore } from "../src/idempotency/stores/memory.js";
import { createMemoryAuditSink } from "../src/runtime/audit.js";
import type { ToolSpec } from "../src/core/tool.js";
import { boundCapture, HeadTailCapture } from "../src/tools/sandbox/capture.js";
import { DEFAULT_BASH_LIMITS } from "../src/tools/bash.js";

const require = createRequire(import.meta.url);
const o200k = require("gpt-tokenizer/cjs/encoding/o200k_base") as {
  countTokens(text: string, options?: unknown): number;
};
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** The counting before pieces were bounded: ASCII pieces whole to the encoder (cached up to 64 characters), other text
 * whole. */
const wholeCounts = new Map<string, number>();
function countTokensWhole(text: string): number {
  if (!isAscii(text)) return o200k.countTokens(text, AS_TEXT);
  let total = 0;
  for (let i = 0; i < text.length;) {
    const end = pieceEnd(text, i);
    const piece = text.slice(i, end);
    let n = wholeCounts.get(piece);
    if (n === undefined) {
      n = o200k.countTokens(piece, AS_TEXT);
      if (piece.length <= 64) {
        if (wholeCounts.size >= 16_384) wholeCounts.clear();
        wholeCounts.set(piece, n);
      }
    }
    total += n;
    i = end;
  }
  return total;
}

let seed = 20261201;
const rnd = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 4294967296;
};
const letters = (n: number) =>
  Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(rnd() * 26))).join("");
const rareCjk = (n: number) =>
  Array.from({ length: n }, () => String.fromCharCode(0x4e00 + Math.floor(rnd() * 20_000))).join("");
function mixed(chars: number): string {
  const words = [
    "the",
    "quick",
    "brown",
    "fox",
    "función",
    "données",
    "漢字",
    "テスト",
    "—",
    "42",
    "1234",
    '{"a": [1, 2]}',
    "naïve",
    "😀",
    "return x;",
  ];
  // Joined, not appended: a flat string, as JSON.parse makes (an appended one is a rope that the first reader
  // flattens).
  const parts: string[] = [];
  for (let n = 0; n < chars;) {
    const part = words[Math.floor(rnd() * words.length)] + (rnd() < 0.1 ? "\n" : " ");
    parts.push(part);
    n += part.length;
  }
  return parts.join("");
}

/** One step's time, ms: CPU time of this process (what the step costs, whatever else the machine runs) and wall time.
 * */
interface Step {
  cpu: number;
  wall: number;
}
const slower = (a: Step, b: Step): Step => ({ cpu: Math.max(a.cpu, b.cpu), wall: Math.max(a.wall, b.wall) });

async function timed(fn: () => unknown): Promise<Step> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1000, wall: performance.now() - t0 };
}

// Collect before each timed step: building megabytes of input leaves garbage whose collection
// would otherwise land in whichever step runs next (the step's own garbage still counts).
v8.setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

/** The slowest of `runs` timings of `fn` on fresh inputs. */
async function worst(runs: number, input: () => string, fn: (text: string) => unknown): Promise<Step> {
  // Once untimed: compiling the code the first time is a cost of starting, not of the step.
  await fn(input());
  let max: Step = { cpu: 0, wall: 0 };
  for (let i = 0; i < runs; i++) {
    const text = input();
    collect();
    max = slower(max, await timed(() => fn(text)));
  }
  return max;
}

export default async function tokensBench(h: Harness): Promise<void> {
  const peer = { name: "count before bounded pieces", fn: () => {} };
  const slow = { batch: 1, rounds: 3, warmup: 0 };
  // One run each, its last character varied per call so that no cache holds the whole run.
  for (const [label, run, ends] of [
    ["50,000 dots", ".".repeat(49_999), "!#$%&*+,-:;<=>?@^_|~"],
    ["50,000 letters", "a".repeat(49_999), "bcdefghijklmnopqrstuvwxyz"],
    ["20,000 CJK (漢)", "漢".repeat(19_999), "字文中国人日本語言葉"],
  ] as const) {
    let a = 0;
    let b = 0;
    await h.compare({
      area: "tokens",
      hot_path: `countTokens, ${label}`,
      toolgate: () => countTokens(run + ends[a++ % ends.length]),
      peer: { ...peer, fn: () => countTokensWhole(run + ends[b++ % ends.length]) },
      ...slow,
    });
  }
  // Text never seen before: a fresh string every time, so no cache answers.
  const fresh = Array.from({ length: 8 }, () => letters(20_000));
  let k = 0;
  let j = 0;
  await h.compare({
    area: "tokens",
    hot_path: "countTokens, 20,000 random letters (fresh)",
    toolgate: () => countTokens(fresh[k++ % 8]!),
    peer: { ...peer, fn: () => countTokensWhole(fresh[j++ % 8]!) },
    ...slow,
  });
  const mb = mixed(1_000_000);
  await h.compare({
    area: "tokens",
    hot_path: "countTokens, 1 MB mixed text",
    toolgate: () => countTokens(mb),
    peer: { ...peer, fn: () => countTokensWhole(mb) },
    batch: 1,
    rounds: 5,
    warmup: 1,
  });
  const source = mixed(4000);
  await h.compare({
    area: "tokens",
    hot_path: "countTokens, 4 KB mixed text (cached)",
    toolgate: () => countTokens(source),
    peer: { ...peer, fn: () => countTokensWhole(source) },
    batch: 20,
    rounds: 20,
  });

  // The worst single step, fresh hostile input each time.
  const steps: [string, Step][] = [];
  const record = (text: string) =>
    completeRecord({
      record: { argument_tokens: null, observation_tokens: null } as never,
      arguments: { command: text },
      observation_text: "error denied",
    });
  steps.push(["audit line, 1 MB argument of random letters", await worst(5, () => letters(1_000_000), record)]);
  steps.push(["audit line, 1 MB argument of rare CJK", await worst(5, () => rareCjk(350_000), record)]);
  steps.push([
    "audit line, 1 MB argument of dots",
    await worst(5, () => ".".repeat(1_000_000 - Math.floor(rnd() * 100)), record),
  ]);
  steps.push(["audit line, 1 MB mixed argument", await worst(5, () => mixed(1_000_000), record)]);
  const marker = (n: number) => `[cut ${n} tokens]`;
  steps.push([
    "fitText 10 MB random letters to 2,000 tokens",
    await worst(
      3,
      () => letters(10_000_000),
      (t) => fitText(t, 2000, marker),
    ),
  ]);
  steps.push([
    "fitText 10 MB rare CJK to 2,000 tokens",
    await worst(
      3,
      () => rareCjk(3_500_000),
      (t) => fitText(t, 2000, marker),
    ),
  ]);
  steps.push([
    "fitText 10 MB of line breaks to 2,000 tokens",
    await worst(
      3,
      () => "\n".repeat(10_000_000 - Math.floor(rnd() * 100)),
      (t) => fitText(t, 2000, marker),
    ),
  ]);
  // bash_execute's capture keeps 128 KB of head and of tail per stream and encodes both whole.
  steps.push([
    "boundCapture, 256 KB of random letters without a newline",
    await worst(
      3,
      () => letters(400_000),
      (t) => {
        const capture = new HeadTailCapture(DEFAULT_BASH_LIMITS.output_bytes);
        capture.push(Buffer.from(t));
        return boundCapture(capture, 2000, "stdout");
      },
    ),
  ]);
  const echo: ToolSpec = {
    name: "echo",
    description: "echo",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { text: { type: "string", maxLength: 100 } },
      required: ["text"],
      additionalProperties: false,
    },
    effect: "read",
    handler: () => "ok",
  };
  const gateway = createGateway({ tools: [echo], store: createMemoryStore(), audit: createMemoryAuditSink() });
  let n = 0;
  const refused = (text: string) =>
    gateway.call({ trajectory_id: "b", turn: 0, call_id: `c${n++}`, tool: "echo", arguments: { text } });
  steps.push([
    "refused gateway call, 1 MB random-letter argument (whole call)",
    await worst(3, () => letters(1_000_000), refused),
  ]);
  steps.push([
    "refused gateway call, 1 MB rare-CJK argument (whole call)",
    await worst(3, () => rareCjk(350_000), refused),
  ]);
  await gateway.close();

  for (const [label, step] of steps) {
    h.record({
      area: "tokens",
      hot_path: `worst step: ${label}`,
      toolgate_median_us: step.cpu * 1000,
      peer: null,
      peer_median_us: null,
      ratio: null,
      goal: "≤ 50 ms",
      goal_met: step.cpu <= 50,
      note: `CPU time, slowest of several fresh inputs; wall ${step.wall.toFixed(1)} ms`,
    });
    process.stderr.write(`    worst step ${label}: ${step.cpu.toFixed(1)} ms CPU, ${step.wall.toFixed(1)} ms wall\n`);
  }
}
