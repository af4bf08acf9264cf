/**
 * A state folder inside the workspace, only on request (`--state-dir .toolgate`): created at
 * start before any call, hidden from the tools from the first call, recognised afterwards only
 * as toolgate's own, and refused when it is a link, was not made by toolgate, or sits anywhere
 * but directly under the workspace root. Built the way `toolgate serve` builds its gateway.
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { codingCatalogOptions } from "../../src/cli/commands/serve.js";
import { gatewayFromSettings, prepareState, type GatewaySettings } from "../../src/cli/host/gateway-settings.js";
import type { Gateway } from "../../src/runtime/types.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { binaryAvailable } from "../support/require.js";
import { listTree, tempDir, userHome } from "./support.js";

const open: Gateway[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((g) => g.close()));
});

/** What `toolgate serve --workspace ws …` does before it answers anything. */
async function serve(ws: string, settings: GatewaySettings): Promise<Gateway> {
  const state = prepareState({ workspace: ws, ...settings });
  const gateway = await gatewayFromSettings(
    createCodingCatalog(codingCatalogOptions(ws, state)),
    { workspace: ws, ...settings },
    state,
  );
  open.push(gateway);
  return gateway;
}

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
let n = 0;
const call = (gateway: Gateway, tool: string, args: Record<string, unknown>) =>
  gateway.call({ trajectory_id: "t", turn: n, call_id: `c${++n}`, tool, arguments: args });

describe("--state-dir inside the workspace", () => {
  it("is created at start, before any call: 0700, holding toolgate's marker, the store and the audit trail (0600)", async () => {
    const ws = tempDir("ws");
    const env = userHome();
    await serve(ws, { stateDir: ".toolgate", env });
    const dir = join(ws, ".toolgate");
    expect(mode(dir)).toBe("700");
    expect(listTree(dir)).toEqual([".toolgate-dir", "audit.jsonl", "state.db", "state.db-shm", "state.db-wal"]);
    expect([mode(join(dir, ".toolgate-dir")), mode(join(dir, "state.db")), mode(join(dir, "audit.jsonl"))]).toEqual([
      "600",
      "600",
      "600",
    ]);
    // The nonce is also recorded outside the workspace, in the per-user state folder.
    const records = listTree(join(env.XDG_STATE_HOME, "toolgate"));
    expect(records.some((r) => /\/workspace-dir-[0-9a-f]{32}$/.test(r))).toBe(true);
  });

  it("is recognised as toolgate's on the next start, with what was recorded in it", async () => {
    const ws = tempDir("ws");
    const env = userHome();
    const first = await serve(ws, { stateDir: ".toolgate", env });
    writeFileSync(join(ws, "a.txt"), "one\n");
    expect((await call(first, "file_edit", { path: join(ws, "a.txt"), old_str: "one", new_str: "two" })).ok).toBe(true);
    await first.close();
    const second = await serve(ws, { stateDir: ".toolgate", env });
    await second.close();
    expect(
      readFileSync(join(ws, ".toolgate", "audit.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean),
    ).toHaveLength(1);
  });

  it.runIf(binaryAvailable("bwrap"))("is hidden from the first bash_execute and closed to the file tools", async () => {
    const ws = tempDir("ws");
    const gateway = await serve(ws, { stateDir: ".toolgate", env: userHome() });
    const shell = await call(gateway, "bash_execute", {
      command:
        "ls -A .toolgate | wc -l; cat .toolgate/.toolgate-dir .toolgate/state.db 2>&1 | head -c 200; echo; touch .toolgate/x 2>&1 || echo refused",
    });
    expect(shell.ok).toBe(true);
    const out = (shell.output as { stdout: string }).stdout;
    expect(out.split("\n")[0]).toBe("0");
    expect(out).toContain("No such file or directory");
    expect(out).toContain("refused");
    expect(existsSync(join(ws, ".toolgate", "x"))).toBe(false);
    const view = await call(gateway, "file_view", { path: join(ws, ".toolgate", "audit.jsonl"), offset: 1, limit: 5 });
    expect(view.ok).toBe(false);
  });

  it.runIf(binaryAvailable("bwrap"))("a folder of another name is hidden the same way (hiddenPaths)", async () => {
    const ws = tempDir("ws");
    const gateway = await serve(ws, { stateDir: ".state", env: userHome() });
    const shell = await call(gateway, "bash_execute", { command: "ls -A .state | wc -l" });
    expect((shell.output as { stdout: string }).stdout.trim()).toBe("0");
    expect(
      (await call(gateway, "file_view", { path: join(ws, ".state", "audit.jsonl"), offset: 1, limit: 5 })).ok,
    ).toBe(false);
  });

  it("the catalog is told of it (hiddenPaths: the default .toolgate and the real path of the folder)", () => {
    const ws = tempDir("ws");
    const state = prepareState({ workspace: ws, stateDir: ".state", env: userHome() });
    expect(codingCatalogOptions(ws, state)).toEqual({ workspace: ws, hiddenPaths: [".toolgate", join(ws, ".state")] });
    const outside = prepareState({ workspace: ws, env: userHome() });
    expect(codingCatalogOptions(ws, outside)).toEqual({ workspace: ws });
  });
});

describe("--state-dir inside the workspace: refusals, each leaving everything as it was", () => {
  const refused = async (ws: string, settings: GatewaySettings) => {
    try {
      await serve(ws, settings);
    } catch (err) {
      return { code: (err as { code?: string }).code, message: (err as Error).message };
    }
    throw new Error("expected the start to be refused");
  };

  it("a folder shipped with the repository (even a copy of a real one, marker and all) was not made by toolgate here", async () => {
    const env = userHome();
    const a = tempDir("ws");
    await (await serve(a, { stateDir: ".toolgate", env })).close();
    const b = tempDir("ws");
    cpSync(join(a, ".toolgate"), join(b, ".toolgate"), { recursive: true });
    const before = listTree(join(b, ".toolgate"));
    const r = await refused(b, { stateDir: ".toolgate", env });
    expect(r.code).toBe("unsafe_state_path");
    expect(r.message).toContain(
      `the state folder ${b}/.toolgate already exists and was not created by toolgate for this workspace (toolgate has no record of creating it`,
    );
    expect(r.message).toContain(`If nothing in it is yours, remove it (rm -r ${b}/.toolgate) and start again`);
    expect(listTree(join(b, ".toolgate"))).toEqual(before);
  });

  it("a folder whose marker does not hold the nonce recorded when toolgate made it", async () => {
    const env = userHome();
    const ws = tempDir("ws");
    await (await serve(ws, { stateDir: ".toolgate", env })).close();
    writeFileSync(join(ws, ".toolgate", ".toolgate-dir"), "0".repeat(64));
    const r = await refused(ws, { stateDir: ".toolgate", env });
    expect(r.message).toContain(
      "(its .toolgate-dir does not hold the nonce toolgate recorded when it created the folder)",
    );
  });

  it("a link, to a folder outside the workspace or to one inside it", async () => {
    const env = userHome();
    const ws = tempDir("ws");
    const elsewhere = tempDir("elsewhere");
    mkdirSync(join(elsewhere, "real"), { mode: 0o700 });
    symlinkSync(join(elsewhere, "real"), join(ws, ".toolgate"));
    expect(await refused(ws, { stateDir: ".toolgate", env })).toEqual({
      code: "unsafe_state_path",
      message: `the state folder ${ws}/.toolgate is a symbolic link (to "${elsewhere}/real"); toolgate does not follow links to its own state, which could be pointed anywhere; name the real folder instead, or remove the link`,
    });
    expect(readdirSync(join(elsewhere, "real"))).toEqual([]);
    mkdirSync(join(ws, ".inner"), { mode: 0o700 });
    symlinkSync(join(ws, ".inner"), join(ws, ".state"));
    expect(await refused(ws, { stateDir: ".state", env })).toEqual({
      code: "unsafe_state_path",
      message: `the state folder ${ws}/.state is reached through a symbolic link inside the workspace ${ws} (it resolves to ${ws}/.inner), which the agent could point elsewhere; name a real folder directly under the root (e.g. --state-dir .toolgate) or one outside the workspace`,
    });
    expect(readdirSync(join(ws, ".inner"))).toEqual([]);
  });

  it("a folder deeper than directly under the root, and a state file directly in the root", async () => {
    const env = userHome();
    const ws = tempDir("ws");
    expect((await refused(ws, { stateDir: "sub/.toolgate", env })).message).toBe(
      `the state folder ${ws}/sub/.toolgate is inside the workspace ${ws} but not directly under its root: the agent could rename a folder on its path and put anything in its place; use a folder directly under the root (e.g. --state-dir .toolgate) or one outside the workspace`,
    );
    expect((await refused(ws, { store: "memory:", audit: "audit.jsonl", env })).message).toBe(
      `a state file directly in the workspace root ${ws} is open to the agent; keep state outside the workspace (the default), or in a folder of its own directly under the root (--state-dir .toolgate), which toolgate creates at start and hides from the tools`,
    );
    expect(listTree(ws)).toEqual([]);
  });

  it("a default state folder that falls inside the workspace (XDG_STATE_HOME in it) is not used silently", async () => {
    const ws = tempDir("ws");
    const r = await refused(ws, { env: { XDG_STATE_HOME: join(ws, "state") } });
    expect(r.message).toMatch(
      new RegExp(
        `^the default state folder ${ws}/state/toolgate/\\S+ is inside the workspace ${ws}, where the agent can write; keep state outside it: set XDG_STATE_HOME`,
      ),
    );
    expect(listTree(ws)).toEqual([]);
  });
});
