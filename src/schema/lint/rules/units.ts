/**
 * TG004 units — docs/schemas.md ("Units and conventions in names"): `timeout_ms` rather than
 * `timeout`, say whether line numbers start at 1; a unit mistake becomes a validation error.
 */
import type { SchemaRule } from "../finding.js";
import { descriptionOf, isObjectSchema, typesOf, words } from "../util.js";
import { isPlainObject } from "../../../core/json.js";
import { join } from "../../../core/pointer.js";

/** Name words that denote a measured quantity. */
const QUANTITY = new Set([
  "timeout",
  "delay",
  "interval",
  "duration",
  "ttl",
  "wait",
  "age",
  "size",
  "period",
  "elapsed",
  "latency",
  "backoff",
  "expiry",
  "expires",
  "lifetime",
  "retention",
  "sleep",
  "deadline",
  "time",
  "length",
]);
/** Name words that carry the unit. */
const UNITS = new Set([
  "ms",
  "millis",
  "msec",
  "milliseconds",
  "s",
  "sec",
  "secs",
  "seconds",
  "min",
  "mins",
  "minutes",
  "h",
  "hr",
  "hrs",
  "hours",
  "d",
  "days",
  "us",
  "micros",
  "ns",
  "nanos",
  "b",
  "bytes",
  "kb",
  "kib",
  "mb",
  "mib",
  "gb",
  "gib",
  "chars",
  "characters",
  "tokens",
  "lines",
  "items",
  "px",
  "pixels",
  "pct",
  "percent",
  "epoch",
  "unix",
]);
/** Name words of a position whose base (0 or 1) must be stated. */
const POSITION = new Set(["line", "lineno", "column", "col", "offset"]);
const STATES_BASE =
  /\b(0|1|zero|one)[- ]?(based|indexed)\b|\b(starts?|starting|counted|counting|begins?|numbered) (at|from) (0|1|zero|one)\b|\bfirst (line|column) is (0|1)\b|\b(0|1)-origin\b/i;

export const units: SchemaRule = (node, ctx) => {
  const s = node.schema;
  if (!isObjectSchema(s) || !isPlainObject(s.properties)) return;
  for (const [name, raw] of Object.entries(s.properties)) {
    const pointer = join(node.pointer, "properties", name);
    const prop = ctx.resolve(raw, pointer)?.schema ?? raw;
    if (!isPlainObject(prop)) continue;
    const types = typesOf(prop);
    if (!types.includes("integer") && !types.includes("number")) continue;
    const ws = words(name);
    if (ws.some((w) => QUANTITY.has(w)) && !ws.some((w) => UNITS.has(w))) {
      ctx.report({
        rule: "TG004",
        severity: "warning",
        pointer,
        message: `${name} is a quantity with no unit in its name; ${ws.includes("size") || ws.includes("length") ? "bytes, characters, lines and tokens" : "seconds, milliseconds and minutes"} get confused`,
        fix: `rename it with its unit, e.g. ${suggest(name)}, and bound its range`,
      });
    }
    if (
      ws.some((w) => POSITION.has(w)) &&
      !STATES_BASE.test((descriptionOf(raw) || descriptionOf(prop)).slice(0, 4096))
    ) {
      ctx.report({
        rule: "TG004",
        severity: "warning",
        pointer,
        message: `${name} is a position but its description does not say whether counting starts at 0 or 1`,
        fix: `say it in the description, e.g. "1-based: the first line is 1"`,
      });
    }
  }
};

function suggest(name: string): string {
  const ws = words(name);
  const sizeLike = ws.includes("size") || ws.includes("length");
  const sep = name.includes("_") || name === name.toLowerCase() ? "_" : "";
  const unit = sizeLike ? (ws.includes("length") ? "chars" : "bytes") : "ms";
  return sep ? `${name}_${unit}` : `${name}${unit[0]!.toUpperCase()}${unit.slice(1)}`;
}
