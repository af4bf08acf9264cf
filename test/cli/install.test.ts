/**
 * The README's MCP client configurations, started the way a client starts them: the JSON blocks
 * of "Serving over MCP" are read from README.md and each server entry is spawned by the SDK's
 * StdioClientTransport — from `/` and from a temporary folder, no terminal, as root and as an
 * ordinary user (uid 65534) — and must answer initialize and tools/list.
 *
 * The builds are real: a copy of the project is built and linked by `npm link` (into a temporary
 * prefix), packed by `npm pack`, and the tarball installed by `npm install -g --prefix` into another
 * temporary prefix, its dependencies from the npm cache where it has them (`--prefer-offline`; the
 * registry for the rest). That install runs better-sqlite3's install script; the addon this
 * checkout's own install built is offered to it as a local prebuild (prebuild-install's
 * `local_prebuilds`), so it is not compiled a second time — without it the install still works,
 * in minutes instead of seconds.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, cpSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { projectRoot } from "../support/require.js";
import { tempDir } from "../mcp/support.js";

interface ServerEntry {
  command: string;
  args: string[];
}

const NOBODY = 65534;
const memoryServer = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-memory/dist/index.js"));
const pkg = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as { version: string; files: string[] };

/** The `mcpServers` JSON blocks of the README, in order. */
function readmeConfigs(): Record<string, ServerEntry>[] {
  const readme = readFileSync(join(projectRoot, "README.md"), "utf8");
  const blocks = [...readme.matchAll(/```json\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .filter((b) => b.includes('"mcpServers"'));
  return blocks.map((b) => (JSON.parse(b) as { mcpServers: Record<string, ServerEntry> }).mcpServers);
}

/** A folder any user may enter (mkdtemp makes 0700 ones). */
function openDir(prefix: string): string {
  const dir = tempDir(prefix);
  chmodSync(dir, 0o755);
  return dir;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(command, args, { cwd, env, encoding: "utf8", timeout: 480_000 });
  if (r.status !== 0)
    throw new Error(`${command} ${args.join(" ")} exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

interface Start {
  cwd: string;
  /** Run as uid/gid 65534 through setpriv (the test runs as root). */
  asNobody?: boolean;
  /** HOME for the server; undefined leaves HOME unset. */
  home: string | undefined;
  /** Prepended to PATH, as `npm install -g` or `npm link` puts its bin folder there. */
  pathPrefix?: string;
}

/** Spawns `entry` as a client does and returns the tool names it lists, or throws with its stderr. */
async function listThrough(entry: ServerEntry, start: Start): Promise<string[]> {
  const wrap: string[] = ["env", "-u", "HOME", "-u", "XDG_STATE_HOME", "-u", "XDG_CONFIG_HOME"];
  if (start.home !== undefined) wrap.push(`HOME=${start.home}`);
  if (start.pathPrefix) wrap.push(`PATH=${start.pathPrefix}:${process.env.PATH ?? ""}`);
  const prefix = start.asNobody
    ? ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "--", ...wrap]
    : wrap;
  const transport = new StdioClientTransport({
    command: prefix[0]!,
    args: [...prefix.slice(1), entry.command, ...entry.args],
    cwd: start.cwd,
    env: getDefaultEnvironment(),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr += d));
  const client = new Client({ name: "install-test", version: "1.0.0" });
  try {
    await client.connect(transport);
    return (await client.listTools()).tools.map((t) => t.name);
  } catch (err) {
    throw new Error(
      `${entry.command} ${entry.args.join(" ")} from ${start.cwd}: ${String(err)}\nstderr:\n${stderr.slice(-2000)}`,
      { cause: err },
    );
  } finally {
    await client.close();
  }
}

/** The README entry with the README's placeholder paths replaced, and the upstream `npx -y` by the installed memory
 * server (no download). */
function concrete(entry: ServerEntry, checkout: string, workspace: string): ServerEntry {
  const args = entry.args.map((a) => a.replace("/path/to/toolgate", checkout).replace("/path/to/project", workspace));
  const npx = args.indexOf("npx");
  if (npx >= 0) args.splice(npx, 3, process.execPath, memoryServer);
  return { command: entry.command, args };
}

// tools/list is in name order.
const CODING = ["bash_execute", "file_edit", "file_view", "grep_search"];

describe("the README's MCP client configurations, started as a client starts them", { timeout: 900_000 }, () => {
  let checkout = "";
  let linkBin = "";
  let installBin = "";
  let workspace = "";
  let nobodyHome = "";
  const configs = readmeConfigs();

  beforeAll(() => {
    // uid 65534 must reach the memory server and the copy's node_modules (a link into this checkout).
    const reach = spawnSync("setpriv", [
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      "--clear-groups",
      "--",
      "test",
      "-r",
      memoryServer,
    ]);
    if (reach.status !== 0)
      throw new Error(
        `uid ${NOBODY} cannot read ${memoryServer}: the checkout must be in folders others may enter (chmod o+x its parents)`,
      );

    checkout = openDir("checkout");
    for (const f of [
      "package.json",
      "package-lock.json",
      "tsconfig.json",
      "tsconfig.build.json",
      "src",
      ...pkg.files.filter((f) => f !== "dist"),
    ])
      cpSync(join(projectRoot, f), join(checkout, f), { recursive: true });
    symlinkSync(join(projectRoot, "node_modules"), join(checkout, "node_modules"));
    // `npm link` runs `prepare` (the build) and links the bin into the prefix, as in a checkout.
    const linkPrefix = openDir("link-prefix");
    run("npm", ["link", "--no-audit", "--no-fund"], checkout, { ...process.env, npm_config_prefix: linkPrefix });
    linkBin = join(linkPrefix, "bin");

    const packed = openDir("packed");
    run("npm", ["pack", "--ignore-scripts", "--pack-destination", packed], checkout); // dist/ is built already
    const tgz = readdirSync(packed).find((f) => f.endsWith(".tgz"))!;
    expect(tgz).toBe(`toolgate-${pkg.version}.tgz`);
    const installPrefix = openDir("install-prefix");
    const sqlite = join(projectRoot, "node_modules/better-sqlite3");
    const { version } = JSON.parse(readFileSync(join(sqlite, "package.json"), "utf8")) as { version: string };
    const prebuilds = tempDir("prebuilds");
    run(
      "tar",
      [
        "-czf",
        join(
          prebuilds,
          `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`,
        ),
        "build/Release/better_sqlite3.node",
      ],
      sqlite,
    );
    const installEnv = { ...process.env, npm_config_better_sqlite3_local_prebuilds: prebuilds };
    run(
      "npm",
      ["install", "-g", "--prefix", installPrefix, "--prefer-offline", "--no-audit", "--no-fund", join(packed, tgz)],
      packed,
      installEnv,
    );
    installBin = join(installPrefix, "bin");

    workspace = openDir("ws");
    chownSync(workspace, NOBODY, NOBODY);
    nobodyHome = openDir("nobody-home");
    chownSync(nobodyHome, NOBODY, NOBODY);
  }, 900_000);

  it("the README has a checkout configuration (node + dist/cli/main.js) and an installed one (toolgate on PATH)", () => {
    expect(configs.map((c) => Object.values(c).map((e) => e.command))).toEqual([
      ["node", "node"],
      ["toolgate", "toolgate"],
    ]);
  });

  it("from a git checkout: node /abs/dist/cli/main.js, from / and from a temporary folder, as root and as uid 65534", async () => {
    const [serve, proxy] = Object.values(configs[0]!).map((e) => concrete(e, checkout, workspace));
    const rootHome = openDir("root-home");
    for (const cwd of ["/", openDir("cwd")]) {
      expect(await listThrough(serve!, { cwd, home: rootHome })).toEqual(CODING);
      expect(await listThrough(serve!, { cwd, home: nobodyHome, asNobody: true })).toEqual(CODING);
      expect(await listThrough(proxy!, { cwd, home: nobodyHome, asNobody: true })).toContain("read_graph");
    }
  });

  it("after npm link: the toolgate command, from /, as uid 65534", async () => {
    const [serve, proxy] = Object.values(configs[1]!).map((e) => concrete(e, checkout, workspace));
    expect(await listThrough(serve!, { cwd: "/", home: nobodyHome, asNobody: true, pathPrefix: linkBin })).toEqual(
      CODING,
    );
    expect(await listThrough(proxy!, { cwd: "/", home: nobodyHome, asNobody: true, pathPrefix: linkBin })).toContain(
      "read_graph",
    );
  });

  it("after npm pack and npm install -g of the tarball: the toolgate command, from / and a temporary folder, as uid 65534", async () => {
    const [serve, proxy] = Object.values(configs[1]!).map((e) => concrete(e, checkout, workspace));
    for (const cwd of ["/", openDir("cwd")]) {
      expect(await listThrough(serve!, { cwd, home: nobodyHome, asNobody: true, pathPrefix: installBin })).toEqual(
        CODING,
      );
      expect(await listThrough(proxy!, { cwd, home: nobodyHome, asNobody: true, pathPrefix: installBin })).toContain(
        "read_graph",
      );
    }
  });

  it("proxy started in / by a user without a usable home is refused naming the fix, never by mkdir of /.toolgate", () => {
    const [, proxy] = Object.values(configs[1]!).map((e) => concrete(e, checkout, workspace));
    const r = spawnSync(
      "setpriv",
      [
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        "--clear-groups",
        "--",
        "env",
        "-u",
        "HOME",
        "-u",
        "XDG_STATE_HOME",
        `PATH=${installBin}:${process.env.PATH ?? ""}`,
        proxy!.command,
        ...proxy!.args,
      ],
      { cwd: "/", input: "", encoding: "utf8", timeout: 60_000 },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).not.toContain("/.toolgate");
    expect(r.stderr).toContain("toolgate: cannot create the state folder /nonexistent/.local/state/toolgate/");
    expect(r.stderr).toContain("set XDG_STATE_HOME (or HOME) to a folder you own");
  });
});
