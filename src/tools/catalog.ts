/**
 * The general coding catalog (docs/envelope.md): a sandboxed shell, a windowed file viewer, an
 * exact-replacement editor and a structured search. Names and bounds harden the published listing
 * (test/schema/fixtures/seed-listing-5.json); the descriptions say what each returns
 * and how to continue, and the whole catalog stays lint-clean and small (test/tools/catalog.test.ts
 * pins its o200k token count).
 */
import { z } from "zod";
import { defineTool } from "../schema/define.js";
import type { ToolSpec } from "../core/tool.js";
import {
  bashLimits as checkedBashLimits,
  callGate,
  DEFAULT_TIMEOUT_MS,
  executeBash,
  launcherChooser,
  type BashLimits,
} from "./bash.js";
import { DEFAULT_EDIT_LIMITS, editFile, probeEdit, type EditLimits } from "./edit.js";
import { grepLimits as checkedGrepLimits, grepSearch, type GrepLimits } from "./grep.js";
import { createBubblewrap } from "./sandbox/bubblewrap.js";
import { egressPolicy, type EgressConfig } from "./sandbox/egress/policy.js";
import type { SandboxLauncher } from "./sandbox/launcher.js";
import { DEFAULT_VIEW_LIMITS, viewPath, type ViewLimits } from "./view.js";
import { openWorkspace } from "./workspace.js";

export interface CodingCatalogOptions {
  /** The workspace root: absolute, existing. Every path the tools touch must resolve inside it. */
  workspace: string;
  sandbox?: {
    /** The envelope for bash_execute. Default: bubblewrap from PATH (`createBubblewrap()`). */
    launcher?: SandboxLauncher;
    /**
     * Run bash_execute on the host, unsandboxed, when the envelope cannot start. Default false:
     * the tool refuses instead. Passing true prints a warning through `warn`.
     */
    allowUnsandboxed?: boolean;
    /** Where the opt-out warning and the envelope's one-time notices go. Default: process.stderr. */
    warn?: (message: string) => void;
    /**
     * For the default launcher: the host user the sandbox runs as when toolgate is root (never 0).
     * Default: the workspace's owner when not root, else 65534:65534 (see createBubblewrap).
     */
    user?: { uid: number; gid: number };
    /** For the default launcher: hand a root-owned workspace to the sandbox user once. Default true. */
    chownWorkspace?: boolean;
    /** For the default launcher: per-run cgroups, "auto" (default) or "off" (ulimit alone). */
    cgroups?: "auto" | "off";
    /**
     * Network for bash_execute through toolgate's proxy (tools/sandbox/egress): the operator's
     * allow- and deny-lists, bounds and per-host secrets. A connection also needs the call's
     * capability to grant `connect` on `host:H:P` when the gateway holds keys. Default: none, no network.
     */
    egress?: EgressConfig;
  };
  /**
   * Files and folders closed to every file tool and hidden from bash_execute: toolgate's state and
   * key files. Absolute, or relative to the workspace. Default HIDDEN_DEFAULT ([".toolgate"], where
   * `toolgate serve` keeps its store and audit trail when asked to keep them in the workspace).
   */
  hiddenPaths?: string[];
  /**
   * Files and folders (relative to the workspace) the agent may read but not change: file_edit
   * refuses them and bash_execute sees them read-only. Default PROTECTED_DEFAULT: the repository's
   * whole .git (git commands that write it then fail in the sandbox), git hooks and config,
   * .gitmodules, editor and agent settings, .envrc and shell start-up files, whose content runs on
   * the host when a person next works in the repository; with .git or .git/config in the list, the
   * files git's config names are read-only too. Replaces the default list; pass
   * `[...PROTECTED_DEFAULT, "more"]` to extend it, `PROTECTED_DEFAULT.filter((p) => p !== ".git")`
   * to let the agent commit.
   */
  protectedPaths?: string[];
  /** Output, window, size and process bounds; every field optional (defaults in bash.ts, view.ts, edit.ts, grep.ts). */
  limits?: {
    bash?: Partial<BashLimits>;
    view?: Partial<ViewLimits>;
    edit?: Partial<EditLimits>;
    grep?: Partial<GrepLimits>;
  };
}

const path = (what: string) => z.string().max(1024).describe(what);

/**
 * Output schemas: exactly what each handler returns as `output` (bash.ts, view.ts, edit.ts,
 * grep.ts), published as the MCP outputSchema; `structuredContent` conforms to them
 * (test/mcp/server/output-schema.test.ts). Not part of the catalog's token figure, which counts what a
 * model reads per turn: name, description and inputSchema.
 */
const count = (what: string) => z.int().min(0).describe(what);
const version = z.string().describe("sha256 of the file's bytes, for file_edit's expected_version.");

const bashOutput = z.object({
  exit_code: z.int().nullable().describe("Exit status; null when killed by a signal."),
  signal: z.string().nullable().describe("Signal that ended it, e.g. SIGKILL; null if none."),
  timed_out: z.boolean().describe("Killed at timeout_ms."),
  duration_ms: z.number().min(0).describe("Wall time."),
  sandbox: z.string().describe("Envelope that ran it."),
  stdout: z.string().describe("Captured stdout, long output cut and marked."),
  stderr: z.string().describe("Captured stderr, long output cut and marked."),
  stdout_omitted_bytes: count("stdout bytes cut."),
  stderr_omitted_bytes: count("stderr bytes cut."),
  sandbox_denied: z
    .array(
      z.object({
        code: z.string().describe("Stable code."),
        message: z.string().describe("What was denied."),
        host: z.string().describe("egress_denied: the host asked for.").optional(),
        port: z.int().min(1).max(65535).describe("egress_denied: the port asked for.").optional(),
        reason: z.string().describe("egress_denied: why it was refused.").optional(),
      }),
    )
    .describe("Sandbox denials recognised in the output, and connections refused."),
});

const viewOutput = z.object({
  path: z.string().describe("Resolved absolute path."),
  kind: z.enum(["file", "directory"]).describe("What the path is."),
  version: version.optional(),
  total_lines: count("Lines in the file.").optional(),
  first_line: z.int().min(1).describe("First line shown.").optional(),
  last_line: z.int().min(0).describe("Last line shown.").optional(),
  line_endings: z.string().describe("lf, crlf, mixed or none.").optional(),
  lines_cut: count("Shown lines cut at the line length bound.").optional(),
  content: z.string().describe("Numbered lines.").optional(),
  total_entries: count("Entries in the directory.").optional(),
  first_entry: z.int().min(1).describe("First entry shown.").optional(),
  entries: z.array(z.string()).describe("Entry names; / marks a directory, @ a symlink.").optional(),
  next_offset: z.int().min(1).nullable().describe("offset for the next window; null at the end."),
});

/** The fields after `version` are absent when a retry's probe found the edit applied (`probed: true`). */
const editOutput = z.object({
  path: z.string().describe("Resolved absolute path."),
  version,
  previous_version: z.string().describe("version before the edit.").optional(),
  replacements: z.int().min(1).describe("Blocks replaced.").optional(),
  changed_lines: z
    .object({
      start: z.int().min(0).describe("First changed line."),
      end: z.int().min(0).describe("Last changed line."),
    })
    .describe("Where the change landed.")
    .optional(),
  total_lines: count("Lines after the edit.").optional(),
  snippet: z.string().describe("Numbered lines around the change.").optional(),
  probed: z.literal(true).describe("The result comes from a probe after an interrupted attempt.").optional(),
});

const grepOutput = z.object({
  matches: z
    .array(
      z.object({
        path: z.string().describe("File path."),
        line: z.int().min(1).describe("1-based line."),
        column: z.int().min(1).describe("1-based column of the match."),
        text: z.string().describe("The line, cut around the match when long."),
      }),
    )
    .describe("This page of matches."),
  total: count("Matching lines."),
  total_is_lower_bound: z.boolean().describe("The search stopped at its match bound."),
  cursor: count("This page's cursor."),
  next_cursor: z.int().min(0).nullable().describe("cursor of the next page; null on the last."),
  warnings: z.array(z.string()).describe("ripgrep warnings, at most 3.").optional(),
});

/** Builds the four tools over one workspace. Throws if the workspace does not exist. */
export function createCodingCatalog(options: CodingCatalogOptions): ToolSpec[] {
  const ws = openWorkspace(options.workspace, {
    ...(options.hiddenPaths !== undefined ? { hiddenPaths: options.hiddenPaths } : {}),
    ...(options.protectedPaths !== undefined ? { protectedPaths: options.protectedPaths } : {}),
  });
  const bashLimits = checkedBashLimits(options.limits?.bash);
  const viewLimits = { ...DEFAULT_VIEW_LIMITS, ...options.limits?.view };
  const editLimits = { ...DEFAULT_EDIT_LIMITS, ...options.limits?.edit };
  const grepLimits = checkedGrepLimits(options.limits?.grep);
  const allowUnsandboxed = options.sandbox?.allowUnsandboxed === true;
  const warn = options.sandbox?.warn ?? ((m: string) => void process.stderr.write(m + "\n"));
  if (allowUnsandboxed) {
    warn(
      `WARNING [toolgate] allowUnsandboxed is set: if the sandbox cannot start, bash_execute runs commands directly on this host, with access to everything the toolgate process can reach (workspace ${ws.root}).`,
    );
  }
  const chooseLauncher = launcherChooser(catalogLauncher(options.sandbox ?? {}, warn), allowUnsandboxed);
  const gate = callGate(bashLimits.max_concurrent);
  const egress = options.sandbox?.egress ? egressPolicy(options.sandbox.egress) : undefined;
  const networked = egress !== undefined && egress.allow.length > 0;
  const grepGate = callGate(grepLimits.max_concurrent, "grep_search", "limits.grep.max_concurrent");

  const bash = defineTool({
    name: "bash_execute",
    title: "Run a shell command in the sandbox",
    openWorldHint: networked,
    description: networked
      ? "Runs bash in a sandbox: the workspace is cwd and the only lasting writable tree; network only through a proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) to hosts the operator and your capability allow; background processes end with the call. Returns exit_code, stdout and stderr."
      : "Runs bash in a sandbox: the workspace is cwd and the only lasting writable tree; no network; background processes end with the call. Returns exit_code, stdout and stderr.",
    input: z.object({
      command: z.string().min(1).max(8192).describe("Bash command."),
      timeout_ms: z.int().min(1000).max(300_000).default(DEFAULT_TIMEOUT_MS).describe("Time limit."),
    }),
    output: bashOutput,
    effect: "write",
    grant: () => ({ op: "execute", target: `path:${ws.root}` }),
    handler: (args, ctx) =>
      executeBash(chooseLauncher, ws, args, bashLimits, ctx, gate, networked ? egress : undefined),
    timeout_ms: 305_000,
    // The sandbox kills the command at its own timeout_ms; 5 s more covers the kill and the capture.
    timeoutFor: (args) => (args.timeout_ms ?? DEFAULT_TIMEOUT_MS) + 5_000,
    budget_tokens: 2 * bashLimits.output_tokens + 500,
  });

  const view = defineTool({
    name: "file_view",
    title: "View a file or directory",
    openWorldHint: false,
    description:
      "Returns numbered lines of a text file with its line count, version (for file_edit) and next offset; a directory lists its entries.",
    input: z.object({
      path: path("Absolute path in the workspace."),
      offset: z.int().min(1).max(100_000_000).describe("First line, 1-based."),
      limit: z.int().min(1).max(500).describe("Max lines."),
    }),
    output: viewOutput,
    effect: "read",
    check: (args) => ws.check(args.path),
    grant: async (args) => ({ op: "read", target: await ws.target(args.path) }),
    handler: (args, ctx) => viewPath(ws, args, viewLimits, ctx),
    timeout_ms: 60_000,
    // The window is token-bounded itself; the budget leaves room for the header and the fence.
    budget_tokens: viewLimits.window_tokens + 500,
  });

  const edit = defineTool({
    name: "file_edit",
    title: "Edit a file by exact replacement",
    openWorldHint: false,
    description:
      "Replaces exact text in a file. old_str must match once (or set allow_multiple), else nothing changes and the error says why. Returns the new version and changed lines.",
    input: z.object({
      path: path("Absolute path in the workspace."),
      old_str: z.string().min(1).max(100_000).describe("Exact text, indentation included."),
      new_str: z.string().max(100_000).describe("Replacement; empty deletes."),
      allow_multiple: z.boolean().default(false).describe("Replace every match."),
      expected_version: z
        .string()
        .regex(/^([0-9a-f]{64})?$/)
        .default("")
        .describe("version from file_view; refuses if the file changed."),
    }),
    output: editOutput,
    effect: "write",
    check: (args) => ws.checkWrite(args.path),
    grant: async (args) => ({ op: "write", target: await ws.target(args.path) }),
    handler: (args) => editFile(ws, args, editLimits),
    probe: (args) => probeEdit(ws, args, editLimits),
    timeout_ms: 60_000,
  });

  const grep = defineTool({
    name: "grep_search",
    title: "Search files with ripgrep",
    openWorldHint: false,
    description:
      "Searches files with a Rust regex, skipping hidden and .gitignored ones. Returns path, line, column and text per match, 100 per page, with the total and next_cursor.",
    input: z.object({
      pattern: z.string().min(1).max(512).describe("Regex."),
      path: path("Absolute directory or file in the workspace."),
      glob: z.string().max(256).default("").describe("File glob, e.g. *.ts."),
      cursor: z.int().min(0).max(1_000_000).default(0).describe("Previous page's next_cursor."),
    }),
    output: grepOutput,
    effect: "read",
    check: (args) => ws.check(args.path),
    grant: async (args) => ({ op: "read", target: await ws.target(args.path) }),
    // ripgrep runs in bash_execute's envelope: the same launcher (probed once) and limits.
    handler: (args, ctx) =>
      grepSearch(ws, args, grepLimits, ctx.signal, ctx, { choose: chooseLauncher, limits: bashLimits, gate: grepGate }),
    timeout_ms: 60_000,
    budget_tokens: grepLimits.page_tokens + 500,
  });

  return [bash, view, edit, grep] as ToolSpec[];
}

/** The launcher given, else bubblewrap with the catalog's sandbox options (which configure only that default). */
function catalogLauncher(
  sandbox: NonNullable<CodingCatalogOptions["sandbox"]>,
  warn: (m: string) => void,
): SandboxLauncher {
  const given = (["user", "chownWorkspace", "cgroups"] as const).filter((k) => sandbox[k] !== undefined);
  if (sandbox.launcher !== undefined && given.length > 0) {
    throw new Error(
      `sandbox.${given.join(", sandbox.")} configure the default launcher, and sandbox.launcher replaces it; pass them to createBubblewrap({ ... }) instead`,
    );
  }
  if (sandbox.launcher !== undefined) return sandbox.launcher;
  return createBubblewrap({
    warn,
    ...(sandbox.user !== undefined ? { user: sandbox.user } : {}),
    ...(sandbox.chownWorkspace !== undefined ? { chownWorkspace: sandbox.chownWorkspace } : {}),
    ...(sandbox.cgroups !== undefined ? { cgroups: sandbox.cgroups } : {}),
  });
}
