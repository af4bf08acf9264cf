/**
 * Pinned catalogs: the defence against a server that changes what a tool says after it was
 * trusted (a "rug pull"). A tool's whole definition — name, title, description, input and output
 * schema, annotations — is hashed over its canonical JSON (RFC 8785), so any change to any of
 * them, a description's included, is a change; key order and white space are not. The first
 * definition seen is pinned in the guard store, shared by replicas; a different one is held
 * (not listed, calls refused) until an operator accepts it (`toolgate pins accept`).
 */
import { createHash } from "node:crypto";
import { canonicalize } from "../canonical/jcs.js";
import { isPlainObject, type JsonValue } from "../core/json.js";
import type { PinRecord, PinStore } from "./guard-store.js";

/** The fields of an MCP tool that make up its definition; anything else (`_meta`, icons) may change freely. */
export const PINNED_FIELDS = ["name", "title", "description", "inputSchema", "outputSchema", "annotations"] as const;

/** The definition a pin covers: the pinned fields the tool has, as it sent them. */
export function pinnedDefinition(tool: unknown): JsonValue {
  const out: Record<string, JsonValue> = {};
  if (!isPlainObject(tool)) return out;
  for (const field of PINNED_FIELDS) if (tool[field] !== undefined) out[field] = tool[field] as JsonValue;
  return out;
}

/** SHA-256 hex of the definition's canonical JSON. */
export function definitionHash(definition: JsonValue): string {
  return createHash("sha256").update(canonicalize(definition)).digest("hex");
}

/**
 * What the pins say of one tool now: `pinned` (the pin is this definition, pinned by this report
 * when it was the first) or `held` (different from the pin: `pin.pending` is this definition).
 */
export interface PinVerdict {
  tool: string;
  hash: string;
  state: "pinned" | "held";
  pin: PinRecord;
}

/** Reports every tool of `server` to the pins and says which are held. */
export async function reviewPins(
  pins: PinStore,
  server: string,
  tools: readonly unknown[],
  now: number,
): Promise<PinVerdict[]> {
  return Promise.all(
    tools.map(async (tool) => {
      const definition = pinnedDefinition(tool);
      const name = String((definition as Record<string, JsonValue>).name);
      const hash = definitionHash(definition);
      const pin = await pins.observe(server, name, hash, definition, now);
      return { tool: name, hash, state: pin.hash === hash ? "pinned" : "held", pin } satisfies PinVerdict;
    }),
  );
}
