/**
 * What `createGateway` (`gateway.ts`) is given: `GatewayOptions`, every field with its default,
 * and the defaults and margins the gateway applies to calls and to its close.
 */
import type { ToolSpec } from "../core/tool.js";
import type { Store } from "../idempotency/store.js";
import type { CapabilityAuthority } from "../capability/authority.js";
import type { KeyRing } from "../capability/keys.js";
import type { ContinuationOptions } from "../observation/continuations.js";
import type { AuditSink } from "./audit.js";
import type { ApproveVia } from "./approvals.js";
import type { RateLimits } from "./rate-limit.js";
import type { Budgets } from "./config.js";

export interface GatewayOptions {
  /** The catalog; names must be unique. */
  tools: ToolSpec[];
  /** Idempotency records and approvals (and the authority's revocations and budgets). */
  store: Store;
  /** Capability root keys: when set (or `authority` is), every call needs a capability. */
  keys?: KeyRing;
  /** A ready authority (overrides `keys`). */
  authority?: CapabilityAuthority;
  /** Observation budgets in o200k tokens: per tool > gateway default > the tool's own `budget_tokens` > 2,000 (see
   * `Budgets`). */
  budgets?: Budgets;
  /** Audit sink: a JSONL path (default `audit.jsonl` in the current directory's state folder, outside it:
   * `createAuditSink`), a sink, or false for none. */
  audit?: string | AuditSink | false;
  /** Epoch ms, for approvals, leases and timestamps. Default `Date.now`. */
  clock?: () => number;
  /** Secret values redacted from every observation (e.g. API keys from the environment); ≥ 6 characters each. */
  secrets?: string[];
  /** Idempotency lease for A2/A3, ms; always at least the tool's timeout plus 5 s. Default 60,000. */
  lease_ms?: number;
  /** Lifetime of an A3 approval request, ms. Default 15 minutes. */
  approval_ttl_ms?: number;
  /**
   * Which channels' approvals run an A3 call: `cli` (`toolgate approvals`, or your own code through
   * `gateway.approvals`), `elicitation` (a person an MCP client asked), or `both` (default).
   */
  approve_via?: ApproveVia;
  /** HMAC secret for derived idempotency keys (docs/idempotency.md: when keys must not be guessable). */
  key_secret?: string | Uint8Array;
  /** Time bound for tools that set no `timeout_ms`, ms; null = unbounded. Default 60,000. */
  timeout_ms?: number | null;
  /**
   * Keep the part a budget cut removes behind a cursor and add the built-in `read_more` tool that
   * pages through it (in process memory; default off, so the catalog is exactly `tools`).
   */
  continuations?: boolean | Omit<ContinuationOptions, "now">;
  /** Calls per window, per tool, server or grant holder, counted in a guard store (`runtime/rate-limit.ts`). */
  rate_limits?: RateLimits;
}

export const DEFAULT_LEASE_MS = 60_000;
export const DEFAULT_TIMEOUT_MS = 60_000;
export const LEASE_MARGIN_MS = 5_000;
/** After the grace period: how long aborted calls get to record IN_DOUBT and answer (store writes are bounded by the
 * store's own timeouts). */
export const SETTLE_AFTER_ABORT_MS = 5_000;
