/**
 * The validator: Ajv, each tool's input schema compiled once and cached by schema identity.
 * The valid path is one cached-function call. The verdict costs what Ajv's does: a refusal
 * keeps Ajv's errors and builds its issues on first read (then keeps them), the way Ajv's
 * own `errorsText` is a separate step. Foreign
 * schemas compile too: draft-07 (by `$schema`) on the draft-07 Ajv, strict mode off, unknown
 * formats ignored, and patterns Ajv's unicode mode rejects retried without it.
 */
import type { ErrorObject, ValidateFunction } from "ajv";
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { ObservationIssue } from "../core/observation.js";
import { ToolgateError } from "../core/errors.js";
import { issuesFrom } from "./issues.js";

// ajv-formats is CommonJS: under NodeNext its default import is the module namespace.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv | Ajv2020) => void;

/**
 * The verdict. On a refusal, `issues` is built from Ajv's errors when first read and kept:
 * it describes the arguments as they were at that read, so read it before changing them.
 * It is a getter: a spread or `Object.keys` sees `ok` only (JSON.stringify sees both).
 */
export type ValidationResult<T = unknown> = { ok: true; value: T } | { ok: false; issues: ObservationIssue[] };

export interface Validator {
  /** Validates `args` against `spec.inputSchema` (compiled on first use, then cached). Never throws for bad arguments.
   * */
  validate<T = unknown>(
    spec: { name: string; inputSchema: Record<string, unknown> },
    args: unknown,
  ): ValidationResult<T>;
  /** Compiles a schema ahead of time; throws ToolgateError `schema_invalid` when Ajv cannot use it. */
  compile(spec: { name: string; inputSchema: Record<string, unknown> }): void;
}

const TOO_DEEP: ObservationIssue = {
  path: "",
  code: "too_deep",
  message: "arguments are nested too deeply to validate",
  expected: "arguments nested at most a few hundred levels",
};

/**
 * A refusal whose issues are built from Ajv's errors (a fresh array per call) on first read.
 * `issues` is an accessor on the prototype: an own accessor per object costs V8 ~1 µs, more
 * than the whole validation. `toJSON` keeps the issues in a serialisation; a spread copies
 * only `ok`, so read `issues` by name. Ajv's errors point into the arguments: read `issues`
 * before changing them (the gateway reads them at once).
 */
class Rejection {
  readonly ok = false as const;
  readonly #errors: readonly ErrorObject[];
  readonly #root: Record<string, unknown>;
  #issues: ObservationIssue[] | undefined;
  constructor(errors: readonly ErrorObject[], root: Record<string, unknown>) {
    this.#errors = errors;
    this.#root = root;
  }
  get issues(): ObservationIssue[] {
    return (this.#issues ??= issuesFrom(this.#errors, this.#root));
  }
  toJSON(): { ok: false; issues: ObservationIssue[] } {
    return { ok: false, issues: this.issues };
  }
}

const DRAFT07 = /json-schema\.org\/draft-0[4-7]\/schema/;

type Dialect = "2020" | "07";

function makeAjv(dialect: Dialect, unicodeRegExp: boolean): Ajv | Ajv2020 {
  // allErrors: a model fixes every field in one turn; verbose: issues need the schema and data of each error.
  const options = {
    allErrors: true,
    verbose: true,
    strict: false,
    unicodeRegExp,
    logger: false as const,
    validateSchema: false,
  };
  const ajv = dialect === "07" ? new Ajv(options) : new Ajv2020(options);
  addFormats(ajv);
  return ajv;
}

/** Creates a validator with its own Ajv instances and compile cache. */
export function createValidator(): Validator {
  const cache = new WeakMap<object, ValidateFunction>();
  const instances = new Map<string, Ajv | Ajv2020>();
  const ajvFor = (dialect: Dialect, unicode: boolean) => {
    const key = `${dialect}:${unicode}`;
    let ajv = instances.get(key);
    if (!ajv) instances.set(key, (ajv = makeAjv(dialect, unicode)));
    return ajv;
  };

  function compileSchema(name: string, schema: Record<string, unknown>): ValidateFunction {
    const declared = typeof schema.$schema === "string" ? schema.$schema : "";
    // No $schema: MCP says 2020-12, but draft-07 shapes (array `items`) are common in the wild.
    const order: Dialect[] = DRAFT07.test(declared) ? ["07"] : declared ? ["2020"] : ["2020", "07"];
    let first: unknown;
    for (const dialect of order) {
      for (const unicode of [true, false]) {
        try {
          // A fresh instance when the schema's $id is already taken by another tool's schema.
          return ajvFor(dialect, unicode).compile(schema);
        } catch (err) {
          // Too deep to compile: another dialect would overflow the same way.
          if (err instanceof RangeError)
            throw new ToolgateError(
              "schema_invalid",
              `tool ${name}: its input schema is nested too deeply to compile (${err.message}). Flatten it or use $defs with $ref; \`toolgate lint\` shows where.`,
              { cause: err },
            );
          first ??= err;
          if (/already exists/.test((err as Error).message)) {
            try {
              return makeAjv(dialect, unicode).compile(schema);
            } catch {
              /* fall through to the next dialect */
            }
          }
        }
      }
    }
    throw new ToolgateError(
      "schema_invalid",
      `tool ${name}: its input schema cannot be compiled: ${(first as Error).message}. Fix the schema (run \`toolgate lint\` on it).`,
      { cause: first },
    );
  }

  function get(name: string, schema: Record<string, unknown>): ValidateFunction {
    if (typeof schema !== "object" || schema === null)
      throw new ToolgateError(
        "schema_invalid",
        `tool ${name}: inputSchema must be a JSON Schema object; received ${schema === null ? "null" : typeof schema}.`,
      );
    let fn = cache.get(schema);
    if (!fn) {
      try {
        fn = compileSchema(name, schema);
      } catch (err) {
        if (err instanceof ToolgateError) throw err;
        throw new ToolgateError(
          "schema_invalid",
          `tool ${name}: its input schema cannot be compiled: ${(err as Error).message}`,
          { cause: err },
        );
      }
      cache.set(schema, fn);
    }
    return fn;
  }

  // A one-entry front cache: consecutive calls to one tool skip even the WeakMap lookup.
  let lastSchema: object | undefined;
  let lastFn: ValidateFunction | undefined;

  return {
    validate<T>(spec: { name: string; inputSchema: Record<string, unknown> }, args: unknown): ValidationResult<T> {
      let fn: ValidateFunction;
      if (spec.inputSchema === lastSchema) fn = lastFn!;
      else {
        fn = cache.get(spec.inputSchema) ?? get(spec.name, spec.inputSchema);
        lastSchema = spec.inputSchema;
        lastFn = fn;
      }
      let valid: boolean;
      try {
        valid = fn(args) as boolean;
      } catch (err) {
        // Arguments nested deeper than the stack (a recursive schema lets them): refused, not a crash.
        if (err instanceof RangeError) return { ok: false, issues: [TOO_DEEP] };
        throw err;
      }
      if (valid) return { ok: true, value: args as T };
      return new Rejection(fn.errors as ErrorObject[], spec.inputSchema);
    },
    compile(spec) {
      get(spec.name, spec.inputSchema);
    },
  };
}
