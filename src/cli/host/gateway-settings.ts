/**
 * The gateway behind `toolgate serve` and `toolgate proxy`, from command-line style settings:
 * a store URL (default `sqlite:` → `state.db` in the state folder), capability keys (`--keys
 * FILE`, or `TOOLGATE_KEYS` when set), an audit file (default `audit.jsonl` in the state folder)
 * and a default observation budget. The state folder is `defaultStateDir(workspace)`, outside the
 * workspace, unless `stateDir` names another (state/placement.ts decides and prepares every
 * path, before any call). Exported for embedders who want the same defaults.
 */
import { loadKeys } from "../../capability/keys.js";
import { openStore } from "../../idempotency/open.js";
import { createAuditSink } from "../../runtime/audit.js";
import { createGateway, type GatewayOptions } from "../../runtime/gateway.js";
import type { Gateway } from "../../runtime/types.js";
import type { Store } from "../../idempotency/store.js";
import type { ToolSpec } from "../../core/tool.js";
import { placeState, type StatePlacement } from "../../state/placement.js";
import type { ApproveVia } from "../../runtime/approvals.js";

export interface GatewaySettings {
  /** Root that relative store, audit and state paths resolve against, and whose state folder is the default. Default:
   * the current directory. */
  workspace?: string;
  /**
   * Folder for the SQLite store (`sqlite:`) and the audit trail. Default `defaultStateDir(workspace)`
   * (`$XDG_STATE_HOME/toolgate/<name>-<hash>/`). Inside the workspace only directly under its root
   * (e.g. `.toolgate`): then created at start and refused unless toolgate made it.
   */
  stateDir?: string;
  /** Store URL (`sqlite:`, `sqlite:PATH`, `memory:`, `redis://…`, `postgres://…`). Default `sqlite:`. */
  store?: string;
  /** Capability key file (refused inside the workspace); without it `TOOLGATE_KEYS` is used when set, else calls need
   * no capability. */
  keys?: string;
  /** Audit JSONL path, or false for none. Default `<state folder>/audit.jsonl`. */
  audit?: string | false;
  /** Default observation budget, o200k tokens (a tool's own budget wins). */
  budgetTokens?: number;
  /** Which channels' approvals run A3 calls (`--approve-via`); default both. */
  approveVia?: ApproveVia;
  /** Environment for `TOOLGATE_KEYS` and the per-user default folders (HOME, XDG_STATE_HOME, XDG_CONFIG_HOME). Default
   * process.env. */
  env?: NodeJS.ProcessEnv;
}

/** Whether these settings give the gateway capability keys (`--keys FILE` or `TOOLGATE_KEYS`). */
export function keysConfigured(settings: Pick<GatewaySettings, "keys" | "env"> = {}): boolean {
  const env = settings.env ?? process.env;
  return settings.keys !== undefined || Boolean(env.TOOLGATE_KEYS);
}

/**
 * Decides and prepares where the state goes (folders created and checked, a key file inside the
 * workspace refused). `guard: false` skips the in-workspace rules (a proxy started where its
 * working directory is no workspace: see `cwdCountsAsWorkspace`).
 */
export function prepareState(settings: GatewaySettings = {}, options: { guard?: boolean } = {}): StatePlacement {
  return placeState({
    workspace: settings.workspace ?? process.cwd(),
    guard: options.guard ?? true,
    store: settings.store ?? "sqlite:",
    ...(settings.stateDir !== undefined ? { stateDir: settings.stateDir } : {}),
    ...(settings.audit !== undefined ? { audit: settings.audit } : {}),
    ...(settings.keys !== undefined ? { keys: settings.keys } : {}),
    ...(settings.env ? { env: settings.env } : {}),
  });
}

/** Opens the store and builds a gateway over `tools` with the settings above (`state`: from `prepareState`, when
 * already done). */
export async function gatewayFromSettings(
  tools: ToolSpec[],
  settings: GatewaySettings = {},
  state: StatePlacement = prepareState(settings),
  extra: Pick<GatewayOptions, "rate_limits"> = {},
): Promise<Gateway> {
  return (await openGateway(tools, settings, state, extra)).gateway;
}

/** As `gatewayFromSettings`, and the store it opened (the gateway closes it), for what runs beside the gateway. */
export async function openGateway(
  tools: ToolSpec[],
  settings: GatewaySettings = {},
  state: StatePlacement = prepareState(settings),
  extra: Pick<GatewayOptions, "rate_limits"> = {},
): Promise<{ gateway: Gateway; store: Store }> {
  const env = settings.env ?? process.env;
  const keys = keysConfigured(settings)
    ? loadKeys({ ...(settings.keys !== undefined ? { file: settings.keys } : {}), env })
    : undefined;
  const store = await openStore(state.store, { workspace: state.workspace });
  let audit: ReturnType<typeof createAuditSink> | false = false;
  try {
    // Opened now: a trail that cannot be written stops the start, before any call.
    if (state.audit !== false) audit = createAuditSink(state.audit, { openNow: true });
    const gateway = createGateway({
      tools,
      store,
      ...(keys ? { keys } : {}),
      audit,
      ...(settings.budgetTokens !== undefined ? { budgets: { default_tokens: settings.budgetTokens } } : {}),
      ...(settings.approveVia !== undefined ? { approve_via: settings.approveVia } : {}),
      ...extra,
    });
    return { gateway, store };
  } catch (err) {
    if (audit) await audit.close();
    await store.close();
    throw err;
  }
}
