/**
 * The gateway behind `toolgate serve` and `toolgate proxy`, from command-line style settings:
 * a store URL (default `sqlite:` → `<workspace>/.toolgate/state.db`), capability keys (`--keys
 * FILE`, or `TOOLGATE_KEYS` when set), an audit file (default `<workspace>/.toolgate/audit.jsonl`)
 * and a default observation budget. Exported for embedders who want the same defaults.
 */
import { resolve } from "node:path";
import { loadKeys } from "../capability/keys.js";
import { openStore } from "../idempotency/open.js";
import { createGateway } from "../runtime/gateway.js";
import type { Gateway } from "../runtime/types.js";
import type { ToolSpec } from "../schema/types.js";
import type { ApproveVia } from "../runtime/approvals.js";

export interface GatewaySettings {
  /** Root that relative store and audit paths resolve against. Default: the current directory. */
  workspace?: string;
  /** Store URL (`sqlite:`, `sqlite:PATH`, `memory:`, `redis://…`, `postgres://…`). Default `sqlite:`. */
  store?: string;
  /** Capability key file; without it `TOOLGATE_KEYS` is used when set, else calls need no capability. */
  keys?: string;
  /** Audit JSONL path, or false for none. Default `<workspace>/.toolgate/audit.jsonl`. */
  audit?: string | false;
  /** Default observation budget, o200k tokens (a tool's own budget wins). */
  budgetTokens?: number;
  /** Which channels' approvals run A3 calls (`--approve-via`); default both. */
  approveVia?: ApproveVia;
  env?: NodeJS.ProcessEnv;
}

/** Whether these settings give the gateway capability keys (`--keys FILE` or `TOOLGATE_KEYS`). */
export function keysConfigured(settings: Pick<GatewaySettings, "keys" | "env"> = {}): boolean {
  const env = settings.env ?? process.env;
  return settings.keys !== undefined || Boolean(env.TOOLGATE_KEYS);
}

/** Opens the store and builds a gateway over `tools` with the settings above. */
export async function gatewayFromSettings(tools: ToolSpec[], settings: GatewaySettings = {}): Promise<Gateway> {
  const workspace = resolve(settings.workspace ?? process.cwd());
  const env = settings.env ?? process.env;
  const keys = keysConfigured(settings) ? loadKeys({ ...(settings.keys !== undefined ? { file: settings.keys } : {}), env }) : undefined;
  const store = await openStore(settings.store ?? "sqlite:", { workspace });
  try {
    return createGateway({
      tools,
      store,
      ...(keys ? { keys } : {}),
      audit: settings.audit === false ? false : resolve(workspace, settings.audit ?? ".toolgate/audit.jsonl"),
      ...(settings.budgetTokens !== undefined ? { budgets: { default_tokens: settings.budgetTokens } } : {}),
      ...(settings.approveVia !== undefined ? { approve_via: settings.approveVia } : {}),
    });
  } catch (err) {
    await store.close();
    throw err;
  }
}
