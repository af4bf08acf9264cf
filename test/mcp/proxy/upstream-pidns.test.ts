/**
 * Nothing of a stdio upstream outlives `toolgate proxy`: not the upstream's own process only
 * (setpriv's mark did that) but every process it started — here a `sleep` in a session of its own
 * and a node child with a `sleep` of its own (`family-server.mjs`), as an `npx` upstream's node
 * child or a shell's grandchildren. Real proxies from source, real upstream processes, found on
 * the host through /proc: the proxy SIGKILLed, closed, or closing an upstream that ignores SIGTERM
 * and its stdin's end. The chain itself (`upstream-pidns.ts`) is started directly too: a SIGTERM
 * ends an upstream without a handler (it is no namespace init), and the upstream's environment,
 * cwd, ids, signal dispositions and capabilities are a plain spawn's. As root and unprivileged.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { proxyProcess } from "../../support/proxy-process.js";
import { alive, killLeft, pidNamespaceOf, pollUntil, processesInNamespace } from "../../support/procs.js";
import { upstreamNamespaceAvailable } from "../../support/require.js";
import { lineClient, openSession, type LineClient } from "../transports/stdio-lines.js";
import {
  chainWorks,
  FORWARDER_SCRIPT,
  inOwnPidNamespace,
  namespaceFlags,
  shellKeeps,
} from "../../../src/mcp/proxy/upstream-pidns.js";
import { onPath, withParentDeathSignal } from "../../../src/mcp/proxy/upstream-pdeathsig.js";
import { tempDir } from "../support.js";

const familyServer = fileURLToPath(new URL("../fixtures/family-server.mjs", import.meta.url));
const available = upstreamNamespaceAvailable();
const started: number[] = [];

afterAll(() => killLeft(started));

/** The host pids of the upstream and all it started (4: itself, its sleep, its node child and that one's sleep). */
async function family(c: LineClient): Promise<number[]> {
  await openSession(c, "pidns-test");
  let pids: number[] = [];
  // The node child starts its sleep once it has booted: asked again until all four run (bounded).
  for (let i = 0; i < 100 && pids.length < 4; i++) {
    const answer = await c.request("tools/call", { name: "family", arguments: {} });
    const text = (answer.result?.content as Array<{ text: string }>)[0]!.text;
    // The upstream's text sits inside the observation's untrusted fence: its pids, one alone on each line.
    pids = [...text.matchAll(/^(\d+)$/gm)].map((m) => Number(m[1]));
    if (pids.length < 4) await new Promise((r) => setTimeout(r, 50));
  }
  expect(pids).toHaveLength(4);
  started.push(...pids);
  for (const pid of pids) expect(alive(pid), `process ${pid} of the upstream runs`).toBe(true);
  // All in one PID namespace, not the proxy's.
  const namespaces = new Set(pids.map((pid) => pidNamespaceOf(pid)));
  expect(namespaces.size).toBe(1);
  expect([...namespaces][0]).not.toBe(pidNamespaceOf("self"));
  return pids;
}

/** The pids of `pids` still alive once they have all gone or 10 s passed (the bound is not what is tested). */
async function leftOf(pids: number[]): Promise<number[]> {
  await pollUntil(() => pids.every((pid) => !alive(pid)), 10_000);
  return pids.filter(alive);
}

describe.runIf(available)("toolgate proxy and every process of its stdio upstream", { timeout: 60_000 }, () => {
  it("a SIGKILLed proxy leaves nothing behind: the upstream, its session-leader sleep, its node child and that one's sleep", async () => {
    const c = lineClient(proxyProcess([familyServer], "pidns-kill"));
    const pids = await family(c);
    const exited = new Promise((r) => c.child.once("exit", (_code, signal) => r(signal)));
    c.child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    expect(await leftOf(pids)).toEqual([]);
  });

  it("so does one started from a shell that ran cd: OLDPWD (and PS1, IFS) in its environment, as shells export them", async () => {
    const spawned = proxyProcess([familyServer], "pidns-oldpwd");
    const c = lineClient({ ...spawned, env: { ...spawned.env, OLDPWD: "/", PS1: "$ ", IFS: " " } });
    const pids = await family(c);
    const exited = new Promise((r) => c.child.once("exit", (_code, signal) => r(signal)));
    c.child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    expect(await leftOf(pids)).toEqual([]);
  });

  it("a normal close ends the upstream at its stdin's end, and with it all it started", async () => {
    const c = lineClient(proxyProcess([familyServer], "pidns-close"));
    const pids = await family(c);
    expect(await c.end()).toBe(0);
    expect(await leftOf(pids)).toEqual([]);
  });

  it("an upstream that ignores SIGTERM and its stdin's end still ends at the close (SIGKILL), with all it started", async () => {
    const c = lineClient(proxyProcess([familyServer, "--stubborn"], "pidns-stubborn"));
    const pids = await family(c);
    expect(await c.end()).toBe(0);
    expect(await leftOf(pids)).toEqual([]);
  });

  it("the close's SIGTERM reaches the upstream itself (its handler runs), through the forwarder and the init", async () => {
    const marker = join(tempDir("pidns-term"), "sigterm");
    const c = lineClient(proxyProcess([familyServer, "--term-marker", marker], "pidns-term"));
    const pids = await family(c);
    expect(await c.end()).toBe(0);
    expect(readFileSync(marker, "utf8")).toBe("SIGTERM\n");
    expect(await leftOf(pids)).toEqual([]);
  });
});

/** `target` spawned as the proxy would (the chain), with piped stdio. */
function spawnChained(target: { command: string; args: string[] }, cwd: string, detached = false) {
  const env = { PATH: process.env.PATH! };
  const spawned = inOwnPidNamespace(target, env, cwd);
  expect(spawned.args).toContain(FORWARDER_SCRIPT);
  return spawn(spawned.command, spawned.args, { env, cwd, detached, stdio: ["pipe", "pipe", "inherit"] });
}

/**
 * What a node process reports of itself: env, cwd, ids, signal dispositions, capabilities (but the
 * bounding set, full in a new user namespace, where no program gains one), umask, and what it can
 * reach: /etc/shadow, /root, its cwd to write, /etc to write.
 */
const SELF_REPORT = [
  "-e",
  `const s = require("node:fs").readFileSync("/proc/self/status", "utf8").split("\\n").filter((l) => /^(Sig(Ign|Blk)|Cap(Inh|Prm|Eff|Amb)):/.test(l));
   const reach = (f) => { try { f(); return "yes"; } catch (e) { return e.code; } };
   const fs = require("node:fs");
   const reaches = { shadow: reach(() => fs.readFileSync("/etc/shadow")), root: reach(() => fs.readdirSync("/root")),
     cwd: reach(() => fs.writeFileSync("written", "")), etc: reach(() => fs.accessSync("/etc", fs.constants.W_OK)) };
   console.log(JSON.stringify({ env: process.env, cwd: process.cwd(), uid: process.getuid(), gid: process.getgid(),
     euid: process.geteuid(), groups: process.getgroups(), status: s, umask: process.umask(), reaches,
     argv: process.argv.slice(1) }));`,
];
/**
 * Variables bash, started as sh (Fedora, Arch), reads as its options or rewrites, drops or fills in
 * for what it starts (bash 5.2): SHELLOPTS=noexec runs nothing, xtrace traces the scripts to stderr.
 */
const BASH_ACTS_ON = [
  ["SHELLOPTS", "noexec"],
  ["SHELLOPTS", "xtrace"],
  ["BASHOPTS", "extglob"],
  ["BASH_VERSION", "x"],
  ["POSIXLY_CORRECT", "1"],
  ["OLDPWD", "/nonexistent"],
  ["OPTERR", "0"],
  ["PS1", "x"],
  ["PS4", "x"],
  ["LINENO", "5"],
  ["HISTCMD", "5"],
  ["RANDOM", "5"],
  ["SRANDOM", "5"],
  ["EPOCHSECONDS", "5"],
  ["EPOCHREALTIME", "5"],
  ["COMP_WORDBREAKS", "x"],
] as const;
/** Arguments a shell would act on, were they ever read as script: each must arrive as given. */
const HOSTILE_ARGS = ["$(touch pwned)", "`touch pwned`", "; touch pwned", "'\"", "*", "a b", "", "-c", "PWD=/x", "--"];

describe.runIf(available)("the chain an upstream is started through", { timeout: 30_000 }, () => {
  it("hands the upstream the environment, cwd, ids, signal dispositions, capabilities and file access a plain spawn does", () => {
    const cwd = tempDir("pidns-self");
    // bash as sh too (as on Fedora or Arch): it adds SHLVL and _ where dash adds PWD alone.
    const bashAsSh = tempDir("pidns-bash");
    symlinkSync(onPath("bash", process.env.PATH, "/")!, join(bashAsSh, "sh"));
    for (const env of [
      { PATH: process.env.PATH!, HOME: "/nonexistent", child: "kept", c: "kept", EMPTY: "" },
      { PATH: process.env.PATH!, PWD: "/somewhere/else", LANG: "C.UTF-8", SHLVL: "7", _: "/bin/given" },
      { PATH: `${bashAsSh}:${process.env.PATH!}`, HOME: "/nonexistent" },
      { PATH: `${bashAsSh}:${process.env.PATH!}`, PWD: cwd, SHLVL: "1", _: "/bin/given" },
    ]) {
      const plain = spawnSync(process.execPath, [...SELF_REPORT, ...HOSTILE_ARGS], { env, cwd, encoding: "utf8" });
      const target = { command: process.execPath, args: [...SELF_REPORT, ...HOSTILE_ARGS] };
      const spawned = inOwnPidNamespace(target, env, cwd);
      expect(spawned.args).toContain(FORWARDER_SCRIPT);
      const chained = spawnSync(spawned.command, spawned.args, { env, cwd, encoding: "utf8" });
      expect(chained.status).toBe(0);
      expect(JSON.parse(chained.stdout)).toEqual(JSON.parse(plain.stdout));
      expect((JSON.parse(chained.stdout) as { argv: string[] }).argv.slice(-HOSTILE_ARGS.length)).toEqual(HOSTILE_ARGS);
      expect(existsSync(join(cwd, "pwned"))).toBe(false);
    }
  });

  it("an environment sh would act on or rewrite reaches the upstream as given, the namespace kept for all sh only rewrites (SHELLOPTS=noexec ran nothing)", () => {
    const cwd = tempDir("pidns-bash-env");
    const bashAsSh = tempDir("pidns-bash-env-sh");
    symlinkSync(onPath("bash", process.env.PATH, "/")!, join(bashAsSh, "sh"));
    const report = ["-e", "console.log(JSON.stringify(process.env))"];
    const rewritten = [...BASH_ACTS_ON, ["PPID", "5"], ["OPTIND", "9"], ["IFS", "x"], ["OLDPWD", "/"]] as const;
    for (const [path, [name, value]] of [`${bashAsSh}:`, ""].flatMap((p) => rewritten.map((r) => [p, r] as const))) {
      const env = { PATH: `${path}${process.env.PATH!}`, [name]: value };
      const plain = spawnSync(process.execPath, report, { env, cwd, encoding: "utf8" });
      const spawned = inOwnPidNamespace({ command: process.execPath, args: report }, env, cwd);
      // Only what bash reads as its own options (SHELLOPTS, BASH*) is left to setpriv alone.
      expect(spawned.args.includes(FORWARDER_SCRIPT), name).toBe(name !== "SHELLOPTS" && !name.startsWith("BASH"));
      const run = spawnSync(spawned.command, spawned.args, { env, cwd, encoding: "utf8" });
      expect(run.status, name).toBe(0);
      expect(run.stdout, `${name}: the upstream ran`).not.toBe("");
      expect(JSON.parse(run.stdout), name).toEqual(JSON.parse(plain.stdout));
      expect(run.stderr, name).toBe("");
    }
  });

  it("keeps stdin and stdout the upstream's own, and its exit status", async () => {
    const cwd = tempDir("pidns-stdio");
    const child = spawnChained(
      {
        command: process.execPath,
        args: [
          "-e",
          'process.stdin.on("data", (d) => process.stdout.write("echo " + d)); process.stdin.on("end", () => process.exit(7))',
        ],
      },
      cwd,
    );
    const exited = new Promise((r) => child.once("exit", (code, signal) => r({ code, signal })));
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stdin.write("one\n");
    await pollUntil(() => out === "echo one\n", 10_000);
    expect(out).toBe("echo one\n");
    child.stdin.end();
    expect(await exited).toEqual({ code: 7, signal: null });
  });

  /**
   * An upstream without handlers that holds on past stdin's end, started through the chain (in a
   * process group of its own with `group`) and sent `signal` once it runs (to its group, with
   * `group`): how the forwarder exits. SIGKILLed after a bound, should the signal not end it.
   */
  async function signalled(name: string, signal: NodeJS.Signals, group: boolean) {
    const holder = {
      command: process.execPath,
      args: ["-e", 'setInterval(() => {}, 1000); process.stdout.write("ready\\n")'],
    };
    const child = spawnChained(holder, tempDir(name), group);
    started.push(child.pid!);
    const exited = new Promise((r) => child.once("exit", (code, sig) => r({ code, signal: sig })));
    await new Promise((r) => child.stdout.once("data", r));
    process.kill(group ? -child.pid! : child.pid!, signal);
    const bound = setTimeout(() => child.kill("SIGKILL"), 10_000);
    const how = await exited;
    clearTimeout(bound);
    return how;
  }

  it("a SIGTERM ends an upstream that has no handler for it (as pid 2 it keeps the default action)", async () => {
    // The forwarder exits with the init's status, which is the upstream's: killed by SIGTERM, 128 + 15.
    expect(await signalled("pidns-sigterm", "SIGTERM", false)).toEqual({ code: 143, signal: null });
  });

  it("a terminal's SIGINT to the whole process group is the upstream's to take: the chain above it stays", async () => {
    // The upstream died of it (128 + 2, handed up); a forwarder that took it itself would have died by the signal.
    expect(await signalled("pidns-sigint", "SIGINT", true)).toEqual({ code: 130, signal: null });
  });

  it("the init reaps what is orphaned in the namespace: no zombies pile up while the upstream runs", async () => {
    // Five sleeps orphaned at once (their subshells exit), then the upstream waits on nothing.
    const orphaning = {
      command: "/bin/sh",
      args: ["-c", "for i in 1 2 3 4 5; do (sleep 0.2 &); done; echo ready; exec sleep 30"],
    };
    const child = spawnChained(orphaning, tempDir("pidns-reap"));
    started.push(child.pid!);
    await new Promise((r) => child.stdout.once("data", r));
    const ns = readlinkSync(`/proc/${child.pid}/ns/pid_for_children`);
    // Each process in it as "name state" (one gone while read is left out).
    const left = () =>
      processesInNamespace(ns).flatMap((pid) => {
        try {
          return [
            /^\d+ \((.*)\) (\S)/
              .exec(readFileSync(`/proc/${pid}/stat`, "utf8"))!
              .slice(1)
              .join(" "),
          ];
        } catch {
          return [];
        }
      });
    // The init (sh) and the upstream (sleep 30) alone, once the orphans have exited and been reaped.
    await pollUntil(() => left().length === 2, 10_000);
    expect(left()).toEqual(["sh S", "sleep S"]);
    child.kill("SIGKILL");
  });
});

describe("inOwnPidNamespace", () => {
  const dir = tempDir("pidns-path");
  for (const name of ["setpriv", "unshare", "sh", "env", "upstream-tool"]) {
    writeFileSync(join(dir, name), "#!/bin/sh\n");
    chmodSync(join(dir, name), 0o755);
  }
  const only = tempDir("pidns-path-setpriv");
  for (const name of ["setpriv", "upstream-tool"]) {
    writeFileSync(join(only, name), "#!/bin/sh\n");
    chmodSync(join(only, name), 0o755);
  }
  const target = { command: "upstream-tool", args: ["--flag", "a b"] };
  const yes = () => true;

  it("starts the upstream through setpriv, unshare and the forwarder sh where the chain works, the upstream last", () => {
    const spawned = inOwnPidNamespace(target, { PATH: dir }, "/", "linux", 1000, yes);
    expect(spawned.command).toBe(join(dir, "setpriv"));
    const unshareAt = spawned.args.indexOf(join(dir, "unshare"));
    expect(spawned.args.slice(0, unshareAt)).toEqual(["--pdeathsig", "KILL", "--"]);
    expect(spawned.args.slice(unshareAt + 1, unshareAt + 6)).toEqual([
      "--user",
      "--map-current-user",
      "--pid",
      "--",
      join(dir, "sh"),
    ]);
    expect(spawned.args.slice(-4)).toEqual([join(dir, "env"), "upstream-tool", "--flag", "a b"]);
    // A PWD, SHLVL or _ given is handed back to the upstream by the init; root takes no user namespace.
    const asRoot = inOwnPidNamespace(target, { PATH: dir, PWD: "/w", SHLVL: "2" }, "/", "linux", 0, yes);
    expect(asRoot.args.slice(unshareAt + 1, unshareAt + 4)).toEqual(["--pid", "--", join(dir, "sh")]);
    expect(asRoot.args.slice(-5)).toEqual(["PWD=/w", "SHLVL=2", "upstream-tool", "--flag", "a b"]);
    expect(namespaceFlags(0)).toEqual(["--pid"]);
  });

  it("falls back to setpriv alone where the chain does not work, a program is missing, or sh would alter the command or environment", () => {
    const marked = withParentDeathSignal(target, { PATH: dir }, "/", "linux");
    expect(marked.command).toBe(join(dir, "setpriv"));
    expect(inOwnPidNamespace(target, { PATH: dir }, "/", "linux", 1000, () => false)).toEqual(marked);
    expect(inOwnPidNamespace(target, { PATH: dir }, "/", "linux", -1, yes)).toEqual(marked);
    expect(inOwnPidNamespace(target, { PATH: only }, "/", "linux", 1000, yes)).toEqual(
      withParentDeathSignal(target, { PATH: only }, "/", "linux"),
    );
    for (const name of ["A-B", "1X", "BASH_FUNC_f%%", "BASH_ENV", "BASHOPTS", "SHELLOPTS", "toolgate_child"]) {
      expect(shellKeeps({ PATH: dir, [name]: "v" }), name).toBe(false);
      expect(inOwnPidNamespace(target, { PATH: dir, [name]: "v" }, "/", "linux", 1000, yes)).toEqual(marked);
    }
    // What sh sets or rewrites without acting on it is put back by the init.
    expect(shellKeeps({ PATH: dir, IFS: "x", OLDPWD: "/", PPID: "1", _ok: "v", PWD: "/" })).toBe(true);
    // A command with `=` (env would take it for a variable).
    writeFileSync(join(dir, "a=b"), "#!/bin/sh\n");
    chmodSync(join(dir, "a=b"), 0o755);
    const equals = { command: "a=b", args: [] };
    expect(inOwnPidNamespace(equals, { PATH: dir }, "/", "linux", 1000, yes)).toEqual(
      withParentDeathSignal(equals, { PATH: dir }, "/", "linux"),
    );
  });

  it("leaves it as given off Linux, without setpriv, or when the command does not resolve", () => {
    expect(inOwnPidNamespace(target, { PATH: dir }, "/", "darwin", 1000, yes)).toBe(target);
    expect(inOwnPidNamespace(target, { PATH: "/nonexistent" }, "/", "linux", 1000, yes)).toBe(target);
    const missing = { command: "no-such-upstream", args: [] };
    expect(inOwnPidNamespace(missing, { PATH: dir }, "/", "linux", 1000, yes)).toBe(missing);
  });

  it.runIf(available)("asks whether the chain runs by running it: an unshare that fails says no", () => {
    const broken = tempDir("pidns-broken");
    writeFileSync(
      join(broken, "unshare"),
      "#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n",
    );
    chmodSync(join(broken, "unshare"), 0o755);
    const real = inOwnPidNamespace({ command: process.execPath, args: [] }, { PATH: process.env.PATH! });
    const [setpriv, sh, env] = real.args.slice(real.args.indexOf("toolgate-upstream") + 1);
    const chain = {
      setpriv: setpriv!,
      unshare: join(broken, "unshare"),
      sh: sh!,
      env: env!,
      flags: namespaceFlags(process.geteuid!()),
    };
    expect(chainWorks(chain)).toBe(false);
    expect(chainWorks({ ...chain, unshare: real.args[3]! })).toBe(true);
  });
});
