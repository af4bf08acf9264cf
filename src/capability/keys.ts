/**
 * Root keys, held only by the runtime (docs/authority.md: a capability is signed with a key
 * only the runtime holds). A key file or the `TOOLGATE_KEYS` variable holds a JSON map
 * `{ kid: base64 key }`, each key at least 32 bytes. Rotation: add a new kid and issue with it;
 * old kids keep verifying until removed. The issuing kid is the last one listed unless chosen.
 *
 * No key material ever leaves this module: keys become `KeyObject`s (which print as
 * `SecretKeyObject { type: 'secret' }`), the ring prints and serialises as its kids only, and
 * every error names the kid and the byte count, never the bytes.
 */
import { createSecretKey, randomBytes, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { inspect } from "node:util";
import { ToolgateError } from "../core/errors.js";
import { isPlainObject } from "../core/json.js";
import { defaultKeyFile } from "../state/location.js";

export const MIN_KEY_BYTES = 32;
const KID = /^[A-Za-z0-9_-]{1,64}$/;

/** Whether `kid` is a key id a key file may hold (1–64 letters, digits, _ or -). */
export function isKid(kid: string): boolean {
  return KID.test(kid);
}

/** The runtime's root keys by kid. */
export class KeyRing {
  readonly #keys: Map<string, KeyObject>;
  /** The kid `issue` signs with. */
  readonly current: string;

  constructor(keys: Map<string, KeyObject>, current?: string) {
    if (keys.size === 0)
      throw new ToolgateError(
        "no_keys",
        "the key ring is empty; add at least one kid → base64 key of ≥ 32 bytes (toolgate cap keygen --out FILE)",
      );
    const chosen = current ?? [...keys.keys()].pop()!;
    if (!keys.has(chosen))
      throw new ToolgateError(
        "unknown_kid",
        `the issuing kid ${JSON.stringify(chosen)} is not in the key ring (kids: ${[...keys.keys()].join(", ")})`,
      );
    this.#keys = new Map(keys);
    this.current = chosen;
  }

  /** Every kid the ring verifies. */
  get kids(): string[] {
    return [...this.#keys.keys()];
  }

  key(kid: string): KeyObject | undefined {
    return this.#keys.get(kid);
  }

  toJSON(): { kids: string[]; current: string } {
    return { kids: this.kids, current: this.current };
  }

  [inspect.custom](): string {
    return `KeyRing { kids: [${this.kids.join(", ")}], current: ${this.current} }`;
  }
}

/** Builds a ring from a parsed `{ kid: base64 }` map; `source` names where it came from in errors. */
export function keyRingFromMap(map: unknown, source: string, current?: string): KeyRing {
  if (!isPlainObject(map)) {
    throw new ToolgateError(
      "bad_keys",
      `${source} must be a JSON object mapping kid → base64 key, e.g. {"k1":"<44 base64 chars>"}`,
    );
  }
  const keys = new Map<string, KeyObject>();
  for (const [kid, value] of Object.entries(map)) {
    if (!KID.test(kid))
      throw new ToolgateError("bad_keys", `${source}: kid ${JSON.stringify(kid)} must be 1–64 letters, digits, _ or -`);
    if (typeof value !== "string" || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) {
      throw new ToolgateError(
        "bad_keys",
        `${source}: the key for kid ${kid} must be a base64 string (standard or URL-safe)`,
      );
    }
    const bytes = Buffer.from(value.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    if (bytes.length < MIN_KEY_BYTES) {
      throw new ToolgateError(
        "bad_keys",
        `${source}: the key for kid ${kid} is ${bytes.length} bytes; at least ${MIN_KEY_BYTES} are required (toolgate cap keygen makes one)`,
      );
    }
    keys.set(kid, createSecretKey(bytes));
    bytes.fill(0);
  }
  return new KeyRing(keys, current);
}

/** Where `cap keygen` writes by default under `env`, or how that is found when there is no home folder to say. */
function keyFileHere(env: NodeJS.ProcessEnv): string {
  try {
    return defaultKeyFile(env);
  } catch {
    return "$XDG_CONFIG_HOME/toolgate/keys.json";
  }
}

/**
 * Loads the ring from `file` when given, else from `env.TOOLGATE_KEYS`. Throws ToolgateError
 * naming the source when neither is there or the content is wrong.
 */
export function loadKeys(options: { file?: string; env?: NodeJS.ProcessEnv; current?: string } = {}): KeyRing {
  const env = options.env ?? process.env;
  let text: string;
  let source: string;
  if (options.file) {
    source = `key file ${options.file}`;
    try {
      text = readFileSync(options.file, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new ToolgateError(
        "bad_keys",
        `cannot read ${source}: ${code === "ENOENT" ? "no such file (create one with toolgate cap keygen --out FILE)" : (code ?? "error")}`,
      );
    }
  } else if (env.TOOLGATE_KEYS) {
    source = "TOOLGATE_KEYS";
    text = env.TOOLGATE_KEYS;
  } else {
    throw new ToolgateError(
      "no_keys",
      `no capability keys: pass --keys FILE (in code, loadKeys({ file }); toolgate cap keygen writes defaultKeyFile(), ${keyFileHere(env)}) or set TOOLGATE_KEYS to a JSON map kid → base64 key`,
    );
  }
  let map: unknown;
  try {
    map = JSON.parse(text);
  } catch {
    // The parser's message can quote the content, which is key material: say only where.
    throw new ToolgateError("bad_keys", `${source} is not valid JSON; expected {"kid":"base64 key"}`);
  }
  return keyRingFromMap(map, source, options.current);
}

/** A fresh random key (32 bytes), base64: what `cap keygen` writes to a file. */
export function generateKey(): string {
  return randomBytes(MIN_KEY_BYTES).toString("base64");
}

/**
 * The text of a key file holding `map`: the JSON object kid → base64 key that `loadKeys` reads,
 * in issuing order (the last kid signs), two-space indented, with a final newline.
 */
export function serializeKeys(map: Readonly<Record<string, string>>): string {
  return JSON.stringify(map, null, 2) + "\n";
}
