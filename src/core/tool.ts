/**
 * The tool contract every stage of toolgate works on. `defineTool` (zod) produces a
 * `ToolSpec`; the MCP proxy builds one from a foreign server's JSON Schema. The runtime
 * only ever sees `ToolSpec`s, so it knows nothing of zod or MCP.
 */
import type { JsonValue } from "./json.js";
import type { ToolDefinedCode } from "./errors.js";
import type { ContentPart } from "./content.js";
import type { TraceContext } from "./trace.js";

/**
 * The side-effect annotation (docs/authority.md): it decides
 * the authority level and whether a call needs an idempotency key or an approval.
 * read → A0, idempotent → A1, write → A2 (idempotency key), destructive → A3 (key + approval).
 */
export type Effect = "read" | "idempotent" | "write" | "destructive";

export type AuthorityLevel = "A0" | "A1" | "A2" | "A3";

/** MCP tool annotations (MCP 2025-11-25 `ToolAnnotations`), as toolgate reads and lists them. */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** What only MCP clients read of a tool (`ToolSpec.mcp`): what its effect and title cannot say. */
export interface McpFacing {
  /** openWorldHint: false when the tool reaches nothing outside its own domain (MCP assumes true when absent). */
  openWorldHint?: boolean;
  /**
   * Annotations declared elsewhere, listed as declared: a proxied tool's, from its upstream.
   * tools/list keeps their keys and order (their title gives way to `ToolSpec.title`) and sets the
   * three effect hints over them; `openWorldHint` above is not used beside them.
   */
  declared?: ToolAnnotations;
  /**
   * While this answers true, tools/list leaves the tool out (a proxied tool whose definition
   * changed, held until an operator accepts it); calls are still answered, by the tool's `check`.
   */
  hidden?: () => boolean;
  /** Icons listed with the tool (a proxied tool's, from its upstream, checked and bounded there). */
  icons?: readonly McpIcon[];
}

/** An icon as MCP lists it beside a tool, prompt or resource: a URI (https: or data:) and what it shows. */
export interface McpIcon {
  src: string;
  mimeType?: string;
  /** e.g. "48x48", or "any" for a scalable image. */
  sizes?: string[];
  theme?: "light" | "dark";
}

/**
 * How far a long call has got, as its tool reports it while it runs: how long it has run and
 * what it has done so far. A transport may pass it on (an MCP progress notification); the call's
 * outcome never depends on it.
 */
export interface ProgressUpdate {
  /** Milliseconds since the tool started its work. */
  elapsed_ms: number;
  /** One line for a person, e.g. "running for 3 s; 2.0 KiB of output so far". */
  message: string;
  /** What was done so far, by name, e.g. `{ stdout_bytes: 2048, stderr_bytes: 0 }` or `{ files: 12, matches: 40 }`. */
  counts: Record<string, number>;
}

/** The eight severities of a log message, least severe first (RFC 5424's, by MCP's names). */
export const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Whether a message at `level` reaches a receiver that asked for messages of `least` and more severe. */
export function logReaches(level: LogLevel, least: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(least);
}

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === "string" && (LOG_LEVELS as readonly string[]).includes(value);
}

/** One log message a call passes to its caller while it runs (a proxied upstream's). */
export interface LogEntry {
  level: LogLevel;
  /** Who wrote it, e.g. the upstream server's name. */
  logger: string;
  /** The message, already bounded and with control, bidi and invisible characters shown. */
  data: string;
}

/** Where a call's log messages go: the caller's receiver, and the least severe level it wants. */
export interface CallLog {
  level: LogLevel;
  send(entry: LogEntry): void;
}

/**
 * The capability a call was sent with, as a tool may read it: what it names, once its chain
 * verifies. A tool scopes its data by it (the `tenant:` objects it names), never by an argument.
 */
export interface CallerCapability {
  /** This token's grant id (its last block). */
  grant_id: string;
  /** The effective objects (the intersection of every block), canonical `kind:value`, e.g. `tenant:acme`. */
  objects: readonly string[];
}

/** One question a call puts to its caller's side while it runs: a protocol method and its params. */
export interface InputRequest {
  method: string;
  params: Record<string, unknown>;
}

/**
 * Asks the caller's side the requests (keyed); resolves with the answers under the same keys, or
 * rejects saying why it cannot be asked. A transport provides it when its caller can be asked.
 */
export type CallAsk = (
  requests: Readonly<Record<string, InputRequest>>,
  signal: AbortSignal,
) => Promise<Record<string, JsonValue>>;

/** What a tool's handler, check and probe receive besides the arguments. */
export interface ToolContext {
  /** Aborted when the call's time bound passes or the caller goes away. */
  signal: AbortSignal;
  trajectory_id: string;
  turn: number;
  call_id: string;
  /** Epoch milliseconds, from the gateway's injectable clock. */
  now: () => number;
  /**
   * The o200k token budget of this call's observation (the operator's configuration, else the
   * tool's own `budget_tokens`, else 2,000). A tool that bounds its own output (a window, a page)
   * sizes it to fit, leaving room for the gateway's frame, so its continuation stays exact.
   */
  budget_tokens: number;
  /**
   * The capability sent with the call, once its chain verifies (signature, expiry, revocation),
   * verified on first use and once per call; null when none verifies or the gateway requires
   * none. In check, grant, handler and probe alike, for scoping what the call may see to what the
   * caller holds; whether the call itself is allowed stays the grant stage's decision.
   */
  caller?: () => Promise<CallerCapability | null>;
  /**
   * The call's idempotency key, for A2/A3 calls in handler and probe: an endpoint that stores it
   * beside its effect lets the probe of an in-doubt call find out whether the effect happened
   * (docs/idempotency.md). It is the key the record is kept under, also for a re-proposal that
   * joins an approval's call.
   */
  idempotency_key?: string;
  /**
   * Checks one more request against the capability this call was granted under (the same token,
   * the same tool and arguments), for authority a call needs while it runs — each connection a
   * sandboxed command opens. Resolves to null when the capability allows it, else to a reason safe
   * to show a model. Absent when the gateway holds no keys.
   */
  authorizeAlso?: (request: GrantRequest) => Promise<string | null>;
  /** Adds a field to this call's audit record under `notes` (e.g. the connections a command made). */
  note?: (name: string, value: JsonValue) => void;
  /**
   * Reports the call's progress (present when its caller asked for progress). It never blocks and
   * never throws; the gateway drops reports that come faster than a few a second and any after the
   * call has answered.
   */
  progress?: (update: ProgressUpdate) => void;
  /**
   * The caller's log (present when its caller asked for log messages): `send` never blocks and
   * never throws, and the gateway drops what is sent after the call has answered. Entries below
   * `level` are not for this caller.
   */
  log?: CallLog;
  /**
   * Asks the caller's side a question (present when its transport can: a proxied upstream's input
   * request is passed on through it). The tool bounds and checks what it asks.
   */
  ask?: CallAsk;
  /**
   * The caller's W3C trace context, checked, when a valid one came with the call: a tool that
   * calls further (a proxied upstream) passes it on, so the trace continues there.
   */
  trace?: TraceContext;
}

/** The capability request a call makes: operation, target object and cost (docs/authority.md). */
export interface GrantRequest {
  /** A right: "read" | "write" | "execute" | "connect" | any right the deployment defines. */
  op: string;
  /** A typed object, e.g. `path:/ws/a.txt`, `host:api.example.com`, `tool:NAME`. */
  target: string;
  /** Cost of this call in the grant's unit; 1 when the tool does not say. */
  cost?: number;
}

/** A semantic check failure: same shape as a schema issue, rendered the same way. */
export interface CheckIssue {
  /** JSON Pointer into the arguments, e.g. `/since`; "" for the whole call. */
  path: string;
  /** The tool's own machine code, e.g. `not_found`, `forbidden`, `conflict`. */
  code: ToolDefinedCode;
  message: string;
  expected?: string;
  received?: unknown;
  example?: unknown;
}

/** Outcome of a reconciliation probe for an IN_DOUBT call (docs/idempotency.md). */
export type ProbeOutcome =
  { outcome: "applied"; result: JsonValue } | { outcome: "not_applied" } | { outcome: "unknown"; detail?: string };

/**
 * What a handler may return besides its bare output: a text rendering for the model,
 * the post-state after a write (no silent writes, docs/observations.md) and how to continue a cut result.
 * A handler that returns anything else returns its output directly.
 */
export interface ToolResult<O = JsonValue> {
  /** Marks this object as a ToolResult rather than an output that happens to look like one. */
  readonly kind: "toolgate.result";
  output: O;
  /** Text the model reads; when absent the gateway renders `output`. */
  text?: string;
  /** New state after a write: id, version, post-state. */
  state?: Record<string, JsonValue>;
  /** How to get more: the arguments to call again with, and a one-line hint. */
  next?: { arguments: Record<string, JsonValue>; hint: string };
  /** The tool cut its own result: how much was left out. */
  truncated?: { omitted: number; unit: string };
  /**
   * The tool answered with a failure of its own (an MCP `isError` result): a definite answer, not
   * a crash. A write is recorded COMPLETED with it, so a repeat gets the same answer instead of
   * being refused as in doubt; the observation is an error (`tool_failed`) quoting `text`.
   */
  failed?: true;
  /**
   * Images, sounds and resource links beside the text, in order. Passed on bounded (at most
   * `MAX_CONTENT_PARTS`, `MAX_MEDIA_BYTES` of media per result; what does not fit is left out and
   * the text says so); the text names each one, so a model that reads text only still knows.
   */
  content?: ContentPart[];
}

/** The runtime's view of one tool. */
export interface ToolSpec<A = Record<string, unknown>, O = unknown> {
  name: string;
  title?: string;
  description: string;
  /** Published input schema (draft 2020-12, `$schema` set); the validator compiles it once. */
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  effect: Effect;
  /**
   * How MCP clients see the tool beyond its name, title, schemas and effect; the runtime never
   * reads it. `tools/list` sets readOnlyHint, destructiveHint and idempotentHint from `effect`
   * (mcp/server/listing.ts), so what a client is told matches what the gateway enforces.
   */
  mcp?: McpFacing;
  /** Runs after the schema passed; its issues are observations like schema issues. */
  check?: (args: A, ctx: ToolContext) => CheckIssue[] | void | Promise<CheckIssue[] | void>;
  /** Maps arguments to the capability request; default: op from the effect, target `tool:NAME`, cost 1. */
  grant?: (args: A, ctx: ToolContext) => GrantRequest | Promise<GrantRequest>;
  handler: (args: A, ctx: ToolContext) => O | ToolResult<O> | Promise<O | ToolResult<O>>;
  /** Settles an IN_DOUBT call by reading the environment. */
  probe?: (args: A, ctx: ToolContext) => ProbeOutcome | Promise<ProbeOutcome>;
  /** Upper bound on one execution, milliseconds; the gateway aborts past it. */
  timeout_ms?: number;
  /** How the operator gives this tool more time, for the text of a call it cut at `timeout_ms` (e.g. a flag). */
  timeout_hint?: string;
  /**
   * This call's own bound, from its validated arguments (e.g. a shell command's `timeout_ms` plus
   * the time to kill it), ms; it can only lower `timeout_ms`. The lease of an A2/A3 call follows
   * it, so a retry of a short call is not told to wait for the longest one the tool allows.
   */
  timeoutFor?: (args: A) => number | undefined;
  /** Token budget for this tool's observations (o200k) when the operator configured none (see `Budgets`). */
  budget_tokens?: number;
  /**
   * A call may run as a task, on after the request that started it (a build, a test run), its
   * status kept in the store (runtime/tasks.ts). A3 tools may always: their wait for a person's
   * approval is the long part. `"required"`: only as a task, for a call no request could wait out
   * (MCP lists it `execution.taskSupport: "required"`, and a call made otherwise is refused with
   * what to send instead). Default false.
   */
  runsAsTask?: boolean | "required";
}

export const AUTHORITY: Readonly<Record<Effect, AuthorityLevel>> = {
  read: "A0",
  idempotent: "A1",
  write: "A2",
  destructive: "A3",
};

/** Wraps a handler's output with a rendering, post-state or continuation. */
export function toolResult<O>(output: O, extra: Omit<ToolResult<O>, "kind" | "output"> = {}): ToolResult<O> {
  return { kind: "toolgate.result", output, ...extra };
}

export function isToolResult(value: unknown): value is ToolResult<unknown> {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "toolgate.result";
}
