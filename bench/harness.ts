/**
 * The side-by-side benchmark harness shared by every area. Each comparison runs toolgate
 * and its named peer in the same process, alternating in rounds, so both see the same
 * machine state; the reported figure is the ratio of medians (per-operation time), never
 * a wall-clock threshold.
 */
import { performance } from "node:perf_hooks";

type Fn = () => unknown | Promise<unknown>;

export interface Goal {
  /** `time` ratio = toolgate time / peer time (lower is better). */
  op: "<=" | ">=";
  value: number;
  /** How the goal reads in the table, e.g. "≤ 1.2×" or "≥ 1.5× throughput". */
  label: string;
}

export interface Row {
  area: string;
  hot_path: string;
  toolgate_median_us: number;
  peer: string | null;
  peer_median_us: number | null;
  /** toolgate time / peer time; null when there is no peer. */
  ratio: number | null;
  goal: string | null;
  goal_met: boolean | null;
  note?: string;
  /** What the two medians measure: time in µs (default) or a size in KiB (e.g. a process's max RSS). */
  unit?: "us" | "KiB";
}

export interface CompareOptions {
  area: string;
  hot_path: string;
  toolgate: Fn;
  peer?: { name: string; fn: Fn };
  /** Goal on the time ratio toolgate/peer. */
  goal?: Goal;
  /** Operations per timed batch (amortises timer resolution). Default 100. */
  batch?: number;
  /** Timed rounds per side. Default 30. */
  rounds?: number;
  /** Untimed warm-up batches per side. Default 3. */
  warmup?: number;
  note?: string;
}

const isPromise = (v: unknown): v is Promise<unknown> => typeof (v as Promise<unknown> | null)?.then === "function";

async function timeBatch(fn: Fn, batch: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < batch; i++) {
    const r = fn();
    if (isPromise(r)) await r;
  }
  return ((performance.now() - start) * 1000) / batch; // µs per op
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export class Harness {
  readonly rows: Row[] = [];
  constructor(private readonly progress: (line: string) => void = (l) => process.stderr.write(l + "\n")) {}

  /** Runs one side-by-side comparison (or a single measurement without a peer) and records the row. */
  async compare(o: CompareOptions): Promise<Row> {
    const batch = o.batch ?? 100;
    const rounds = o.rounds ?? 30;
    const warmup = o.warmup ?? 3;
    this.progress(`  ${o.area} · ${o.hot_path} …`);
    for (let i = 0; i < warmup; i++) {
      await timeBatch(o.toolgate, batch);
      if (o.peer) await timeBatch(o.peer.fn, batch);
    }
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let r = 0; r < rounds; r++) {
      // Alternate which side goes first so neither always runs on a warmer cache.
      if (o.peer && r % 2 === 1) theirs.push(await timeBatch(o.peer.fn, batch));
      ours.push(await timeBatch(o.toolgate, batch));
      if (o.peer && r % 2 === 0) theirs.push(await timeBatch(o.peer.fn, batch));
    }
    const tg = median(ours);
    const peer = o.peer ? median(theirs) : null;
    const ratio = peer !== null && peer > 0 ? tg / peer : null;
    const goal_met =
      o.goal && ratio !== null ? (o.goal.op === "<=" ? ratio <= o.goal.value : ratio >= o.goal.value) : null;
    const row: Row = {
      area: o.area,
      hot_path: o.hot_path,
      toolgate_median_us: tg,
      peer: o.peer?.name ?? null,
      peer_median_us: peer,
      ratio,
      goal: o.goal?.label ?? null,
      goal_met,
      ...(o.note ? { note: o.note } : {}),
    };
    this.rows.push(row);
    this.progress(
      `    ${fmtUs(tg)}${peer !== null ? ` vs ${fmtUs(peer)} (${o.peer!.name}) = ${ratio!.toFixed(2)}×` : ""}`,
    );
    return row;
  }

  /** Records a row measured elsewhere (e.g. a percentile from a latency loop). */
  record(row: Row): void {
    this.rows.push(row);
  }
}

export function fmtUs(us: number): string {
  if (us >= 1_000_000) return `${(us / 1_000_000).toFixed(2)} s`;
  if (us >= 1000) return `${(us / 1000).toFixed(2)} ms`;
  return `${us.toFixed(2)} µs`;
}

function fmtValue(v: number, unit: Row["unit"]): string {
  return unit === "KiB" ? `${(v / 1024).toFixed(1)} MiB` : fmtUs(v);
}

/** The closing table: hot path · toolgate median · peer median · ratio · goal. */
export function renderTable(rows: Row[]): string {
  const header = ["area", "hot path", "toolgate median", "peer", "peer median", "ratio", "goal", "met"];
  const body = rows.map((r) => [
    r.area,
    r.hot_path,
    fmtValue(r.toolgate_median_us, r.unit),
    r.peer ?? "—",
    r.peer_median_us === null ? "—" : fmtValue(r.peer_median_us, r.unit),
    r.ratio === null ? "—" : `${r.ratio.toFixed(2)}×`,
    r.goal ?? "—",
    r.goal_met === null ? "—" : r.goal_met ? "yes" : "NO",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(" │ ");
  return [line(header), widths.map((w) => "─".repeat(w)).join("─┼─"), ...body.map(line)].join("\n");
}
