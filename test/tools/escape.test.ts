/**
 * The escape suite (docs/envelope.md): every attempt to leave the envelope or the workspace is contained
 * and the observation reports it. Each case checks the host afterwards, not only the message.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, symlinkSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { NoEffectError } from "../../src/core/errors.js";
import type { ToolContext, ToolSpec } from "../../src/core/tool.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { binaryAvailable, serviceAvailable } from "../support/require.js";
import { makeWorkspace, stable } from "./fixtures.js";

const s = makeWorkspace("escape");
afterAll(() => s.cleanup());
const tag = randomBytes(4).toString("hex");
const SECRET = `TOPSECRET-${tag}`;
const secretFile = `${s.outside}/secret.txt`;
s.write("inside.txt", "inside\n");
symlinkSync(s.outside, `${s.root}/out-dir`);
symlinkSync(secretFile, `${s.root}/secret-link.txt`);

const ready = binaryAvailable("bwrap") && binaryAvailable("rg");
const tools = ready
  ? new Map(createCodingCatalog({ workspace: s.root, limits: { bash: { max_processes: 64 } } }).map((t) => [t.name, t]))
  : new Map<string, ToolSpec>();
const ctx = (): ToolContext => ({
  signal: new AbortController().signal,
  trajectory_id: "t-escape",
  turn: 0,
  call_id: "c",
  now: Date.now,
  budget_tokens: 100_000,
});

interface BashOut {
  exit_code: number | null;
  timed_out: boolean;
  stdout: string;
  stderr: string;
  sandbox_denied: { code: string }[];
}
async function bash(command: string, timeout_ms = 20_000): Promise<{ out: BashOut; text: string }> {
  const r = (await tools.get("bash_execute")!.handler({ command, timeout_ms }, ctx())) as {
    output: BashOut;
    text: string;
  };
  return { out: r.output, text: r.text };
}

/** A file tool call: the check's issues when it refuses, else the handler's refusal or result. */
async function fileCall(name: string, args: Record<string, unknown>): Promise<string> {
  const tool = tools.get(name)!;
  const issues = (await tool.check?.(args, ctx())) ?? [];
  const handled = await Promise.resolve(tool.handler(args, ctx())).then(
    () => "ran",
    (e: unknown) => (e instanceof NoEffectError ? `refused ${e.code}` : `failed ${(e as Error).message}`),
  );
  return `${issues.map((i) => `${i.code}: ${stable(i.message, s)}`).join("; ")} | handler ${handled}`;
}

const pgrep = (pattern: string) => spawnSync("pgrep", ["-f", pattern], { encoding: "utf8" }).stdout.trim();

describe.runIf(ready)("escape suite", () => {
  it("a write to /etc fails read-only and the host /etc is untouched", async () => {
    const { out, text } = await bash(`echo pwned > /etc/toolgate-escape-${tag}`);
    expect(out.exit_code).not.toBe(0);
    expect(out.sandbox_denied.map((d) => d.code)).toContain("read_only_filesystem");
    expect(text).toContain("[sandbox denied: the sandbox denied a write");
    expect(existsSync(`/etc/toolgate-escape-${tag}`)).toBe(false);
  });

  it("a write to the workspace's parent and to the host /tmp lands in a throwaway tmpfs", async () => {
    const { out } = await bash(`echo x > ${s.base}/parent-${tag}.txt; echo y > /tmp/host-tmp-${tag}.txt; ls ${s.base}`);
    expect(out.exit_code).toBe(0);
    expect(existsSync(`${s.base}/parent-${tag}.txt`)).toBe(false);
    expect(existsSync(`/tmp/host-tmp-${tag}.txt`)).toBe(false);
    // The parent seen inside holds only the mount point of the workspace: the host's folders are not there.
    expect(out.stdout).not.toContain("outside");
  });

  it("another directory's secrets, /etc/shadow and /root are not visible", async () => {
    s.write("../outside/secret.txt", SECRET);
    const { out } = await bash(
      `cat ${secretFile}; cat /etc/shadow; ls /root; cat ../outside/secret.txt; cat secret-link.txt`,
    );
    expect(out.stdout).not.toContain(SECRET);
    expect(out.stderr).toContain(`${secretFile}: No such file or directory`);
    expect(out.stderr).toContain("/etc/shadow: No such file or directory");
    expect(out.stderr).toContain("/root': No such file or directory");
  });

  it("no network: the host's Redis port is unreachable and DNS fails, and the observation says why", async () => {
    await serviceAvailable("Redis", "127.0.0.1", 6379); // the port is open on the host, so a refusal is the sandbox's doing
    const local = await bash("exec 3<>/dev/tcp/127.0.0.1/6379 && echo connected");
    expect(local.out.stdout).not.toContain("connected");
    expect(local.out.sandbox_denied.map((d) => d.code)).toContain("host_service_unreachable");
    const dns = await bash("exec 3<>/dev/tcp/example.com/80 && echo connected");
    expect(dns.out.stdout).not.toContain("connected");
    expect(dns.out.sandbox_denied.map((d) => d.code)).toContain("no_network");
    expect(dns.text).toContain(
      "[sandbox denied: the sandbox has no network: name resolution and connections to other hosts fail here; retrying will not help]",
    );
  });

  it("the parent's environment is not readable: /proc/1/environ and env show the allowlist only", async () => {
    process.env.TOOLGATE_ESCAPE_SECRET = SECRET;
    try {
      const { out } = await bash(
        "tr '\\0' '\\n' < /proc/1/environ; echo ---; env; echo ---; ps -e -o comm= | sort -u | tr '\\n' ' '",
      );
      expect(out.stdout).not.toContain(SECRET);
      const [init, env] = out.stdout.split("---\n");
      const names = (block: string) =>
        new Set(
          block
            .split("\n")
            .filter(Boolean)
            .map((l) => l.split("=")[0]),
        );
      const allowed = new Set([
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "TERM",
        "PAGER",
        "GIT_PAGER",
        "GIT_TERMINAL_PROMPT",
        "GIT_OPTIONAL_LOCKS",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_KEY_0",
        "GIT_CONFIG_VALUE_0",
        "PWD",
        "SHLVL",
        "_",
      ]);
      for (const n of [...names(init!), ...names(env!)]) expect(allowed).toContain(n);
    } finally {
      delete process.env.TOOLGATE_ESCAPE_SECRET;
    }
  });

  it("a fork bomb is bounded by the process limit and ends at the timeout", async () => {
    // Once the limit is reached no fork succeeds (bash retries them), so the waiting and
    // counting after it use builtins only: read -t on a FIFO, a glob over /proc, echo.
    const counted = await bash(
      "mkfifo /tmp/wait; (for i in $(seq 150); do sleep 30 & done) 2>/dev/null & read -t 4 <>/tmp/wait; n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo $n",
      10_000,
    );
    const seen = Number(counted.out.stdout.trim());
    expect(seen).toBeGreaterThan(40);
    expect(seen).toBeLessThanOrEqual(64 + 4);
    const bomb = await bash(":(){ :|:& };:; sleep 10", 4000);
    expect(bomb.out.timed_out).toBe(true);
    expect(bomb.out.sandbox_denied.map((d) => d.code)).toContain("process_limit");
    expect(bomb.text).toContain("[sandbox denied: the sandbox's process limit (64 processes) refused to start more]");
  });

  it("an orphan `sleep &` does not outlive the call, on timeout or on normal exit", async () => {
    // Durations unique to this run, so another run's orphans on the same machine are not counted.
    const [first, second] = [1, 2].map((n) => `sleep 1003.${parseInt(tag, 16)}${n}`) as [string, string];
    const timed = await bash(`${first} & sleep 60`, 1000);
    expect(timed.out.timed_out).toBe(true);
    const exited = await bash(`nohup ${second} >/dev/null 2>&1 & disown; echo left`);
    expect(exited.out.stdout).toBe("left\n");
    // Without a pids cgroup to wait on, the kernel tears the sandbox's PID namespace down
    // asynchronously: wait for it rather than guess how long it takes (a survivor hangs the test).
    while (pgrep(first) !== "" || pgrep(second) !== "") await new Promise((r) => setTimeout(r, 50));
    expect([pgrep(first), pgrep(second)]).toEqual(["", ""]);
  });

  it("a symlink inside the workspace pointing outside is refused by file_view, file_edit and grep_search", async () => {
    s.write("../outside/secret.txt", SECRET);
    expect(
      await fileCall("file_view", { path: `${s.root}/secret-link.txt`, offset: 1, limit: 10 }),
    ).toMatchInlineSnapshot(
      `"outside_workspace: path "<tmp>/ws/secret-link.txt" resolves to <tmp>/outside/secret.txt, which is outside the workspace <tmp>/ws; use a path under <tmp>/ws/ | handler refused outside_workspace"`,
    );
    expect(
      await fileCall("file_edit", { path: `${s.root}/secret-link.txt`, old_str: "TOPSECRET", new_str: "leaked" }),
    ).toContain("| handler refused outside_workspace");
    expect(readFileSync(secretFile, "utf8")).toBe(SECRET);
    expect(await fileCall("grep_search", { pattern: "TOPSECRET", path: `${s.root}/out-dir` })).toContain(
      "resolves to <tmp>/outside, which is outside",
    );
    // Searching the whole workspace does not follow the links either.
    const r = (await tools.get("grep_search")!.handler({ pattern: "TOPSECRET", path: s.root }, ctx())) as {
      output: { total: number };
    };
    expect(r.output.total).toBe(0);
  });

  it("toolgate's own state (.toolgate/) is hidden from bash_execute and closed to the file tools", async () => {
    const state = s.write(".toolgate/state.db", `records-${tag}`);
    const { out } = await bash(
      "cat .toolgate/state.db; echo forged > .toolgate/state.db; rm -rf .toolgate; ls -a .toolgate",
    );
    expect(out.stdout).not.toContain(`records-${tag}`);
    expect(out.sandbox_denied.map((d) => d.code)).toContain("read_only_filesystem");
    expect(readFileSync(state, "utf8")).toBe(`records-${tag}`);
    expect(await fileCall("file_view", { path: state, offset: 1, limit: 1 })).toMatchInlineSnapshot(
      `"protected_path: path "<tmp>/ws/.toolgate/state.db" resolves to <tmp>/ws/.toolgate/state.db, inside <tmp>/ws/.toolgate, which holds toolgate's own state and is closed to tools; use another path in <tmp>/ws/ | handler refused protected_path"`,
    );
    expect(await fileCall("file_edit", { path: state, old_str: "records", new_str: "forged" })).toContain(
      "| handler refused protected_path",
    );
    expect(await fileCall("grep_search", { pattern: "records", path: `${s.root}/.toolgate` })).toContain(
      "| handler refused protected_path",
    );
    expect(readFileSync(state, "utf8")).toBe(`records-${tag}`);
  });

  it("`..` traversal is resolved and refused by every file tool", async () => {
    const up = `${s.root}/../outside/secret.txt`;
    expect(await fileCall("file_view", { path: up, offset: 1, limit: 1 })).toContain(
      "resolves to <tmp>/outside/secret.txt, which is outside the workspace <tmp>/ws",
    );
    expect(
      await fileCall("file_edit", { path: `${s.root}/a/../../outside/secret.txt`, old_str: "T", new_str: "x" }),
    ).toContain("| handler refused outside_workspace");
    expect(await fileCall("grep_search", { pattern: ".", path: `${s.root}/..` })).toContain(
      "| handler refused outside_workspace",
    );
    expect(readFileSync(secretFile, "utf8")).toBe(SECRET);
  });
});
