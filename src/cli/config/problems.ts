/**
 * How the config reader reports: every mistake is collected with its JSON Pointer, what was
 * expected, what arrived and how to fix it, and the file is refused with all of them at once, so
 * a user fixes the file in one pass and nothing starts on a file that is partly wrong.
 */
import { closest } from "../../core/closest.js";
import { describe } from "../../core/describe.js";
import { ToolgateError } from "../../core/errors.js";
import { isPlainObject } from "../../core/json.js";
import { join } from "../../core/pointer.js";

export interface ConfigProblem {
  /** JSON Pointer into the file, e.g. `/mcpServers/github/command`; `` is the whole file. */
  pointer: string;
  message: string;
  fix: string;
}

/** A refused config file; `problems` holds every mistake found. */
export class ConfigError extends ToolgateError {
  constructor(
    readonly file: string,
    readonly problems: readonly ConfigProblem[],
  ) {
    super(
      "invalid_config",
      `${file}: ${problems.length} ${problems.length === 1 ? "mistake" : "mistakes"}, nothing started:\n` +
        problems.map((p) => `  ${p.pointer || "(the file)"}: ${p.message}; ${p.fix}`).join("\n"),
    );
    this.name = "ConfigError";
  }
}

export class Problems {
  readonly list: ConfigProblem[] = [];

  add(pointer: string, message: string, fix: string): void {
    this.list.push({ pointer, message, fix });
  }

  /** Reports every key of `obj` outside `known`, with the closest known key when one is near. */
  unknownKeys(obj: Record<string, unknown>, pointer: string, known: readonly string[], where: string): void {
    for (const key of Object.keys(obj)) {
      if (known.includes(key)) continue;
      const near = closest(key, known);
      this.add(
        join(pointer, key),
        `unknown key ${JSON.stringify(key)} in ${where}`,
        near ? `did you mean "${near}"?` : `the keys ${where} takes are ${known.join(", ")}`,
      );
    }
  }

  /** `obj[key]` when it is a string (or absent: undefined); a wrong type is reported. */
  string(obj: Record<string, unknown>, key: string, pointer: string, example: string): string | undefined {
    const v = obj[key];
    if (v === undefined || typeof v === "string") return v;
    this.add(join(pointer, key), `expected a string, received ${describe(v)}`, `write it as ${example}`);
    return undefined;
  }

  /** `obj[key]` when it is an array of strings (absent: undefined). */
  strings(obj: Record<string, unknown>, key: string, pointer: string, example: string): string[] | undefined {
    const v = obj[key];
    if (v === undefined) return undefined;
    if (Array.isArray(v) && v.every((s) => typeof s === "string")) return v as string[];
    const bad = Array.isArray(v) ? v.findIndex((s) => typeof s !== "string") : -1;
    this.add(
      bad >= 0 ? join(pointer, key, bad) : join(pointer, key),
      `expected an array of strings, received ${describe(bad >= 0 ? (v as unknown[])[bad] : v)}`,
      `write it as ${example}`,
    );
    return undefined;
  }

  /** `obj[key]` when it is an object of string values (absent: undefined). */
  stringMap(obj: Record<string, unknown>, key: string, pointer: string, example: string): Record<string, string> {
    const v = obj[key];
    if (v === undefined) return {};
    if (!isPlainObject(v)) {
      this.add(join(pointer, key), `expected an object of strings, received ${describe(v)}`, `write it as ${example}`);
      return {};
    }
    const out: Record<string, string> = {};
    for (const [k, s] of Object.entries(v)) {
      if (typeof s === "string") out[k] = s;
      else this.add(join(pointer, key, k), `expected a string, received ${describe(s)}`, `write it as ${example}`);
    }
    return out;
  }

  /** A whole number in [min, max] (absent: undefined). */
  whole(
    obj: Record<string, unknown>,
    key: string,
    pointer: string,
    min: number,
    max: number,
    example = Math.min(max, Math.max(min, 60_000)),
  ): number | undefined {
    const v = obj[key];
    if (v === undefined) return undefined;
    if (typeof v === "number" && Number.isInteger(v) && v >= min && v <= max) return v;
    this.add(
      join(pointer, key),
      `expected a whole number from ${min} to ${max}, received ${describe(v)}`,
      `write a number such as ${example}`,
    );
    return undefined;
  }

  boolean(obj: Record<string, unknown>, key: string, pointer: string): boolean | undefined {
    const v = obj[key];
    if (v === undefined || typeof v === "boolean") return v;
    this.add(join(pointer, key), `expected true or false, received ${describe(v)}`, "write true or false, unquoted");
    return undefined;
  }

  /** `obj[key]` when it is an object (absent: undefined). */
  object(obj: Record<string, unknown>, key: string, pointer: string, example: string) {
    const v = obj[key];
    if (v === undefined) return undefined;
    if (isPlainObject(v)) return v;
    this.add(join(pointer, key), `expected an object, received ${describe(v)}`, `write it as ${example}`);
    return undefined;
  }

  /** Throws the collected problems, if any. */
  throwIfAny(file: string): void {
    if (this.list.length > 0) throw new ConfigError(file, this.list);
  }
}
