/**
 * State the agent could reach or plant, tried as an attacker would: whatever lands in the
 * workspace before or during a run — by the agent's own shell, or shipped with a cloned
 * repository — is never taken for toolgate's state, and toolgate's state is not in the
 * workspace. The gateway is built as `toolgate serve` builds it (gatewayFromSettings).
 */
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gatewayFromSettings, prepareState } from "../../src/cli/host/gateway-settings.js";
import { openStore } from "../../src/idempotency/open.js";
import { createGateway } from "../../src/runtime/gateway.js";
import type { Gateway } from "../../src/runtime/types.js";
import { defaultStateDir } from "../../src/state/location.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { binaryAvailable } from "../support/require.js";
import { deleteNote, readNote } from "../mcp/fixtures/notes-catalog.js";
import { tempDir, userHome } from "./support.js";

const open: Gateway[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((g) => g.close()));
});
const keep = (g: Gateway) => (open.push(g), g);

const read = (call_id: string) => ({
  trajectory_id: "t",
  turn: 0,
  call_id,
  tool: "note_read",
  arguments: { name: "a" },
});
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("the audit trail cannot be redirected from the workspace", () => {
  it("an audit.jsonl link planted in .toolgate/ before the first call (store memory:) appends nothing to its target", async () => {
    const ws = tempDir("ws");
    const env = userHome();
    const victim = join(tempDir("victim"), "bashrc");
    writeFileSync(victim, "# a shell rc file\n");
    process.env.NOTES_DIR = ws;
    const gateway = keep(await gatewayFromSettings([readNote], { workspace: ws, store: "memory:", env }));
    // What the first shell call can do while .toolgate/ does not exist yet.
    mkdirSync(join(ws, ".toolgate"));
    symlinkSync(victim, join(ws, ".toolgate", "audit.jsonl"));
    expect((await gateway.call(read("c1"))).ok).toBe(true);
    await gateway.close();
    expect(readFileSync(victim, "utf8")).toBe("# a shell rc file\n");
    expect(readFileSync(join(defaultStateDir(ws, env), "audit.jsonl"), "utf8")).toContain('"call_id":"c1"');
  });

  it.runIf(binaryAvailable("bwrap"))(
    "bash_execute planting the link itself (first call, store memory:) does not redirect the audit line of that call or the next",
    async () => {
      const ws = tempDir("ws");
      const env = userHome();
      const victim = join(tempDir("victim"), "bashrc");
      writeFileSync(victim, "# a shell rc file\n");
      const gateway = keep(
        await gatewayFromSettings(createCodingCatalog({ workspace: ws }), { workspace: ws, store: "memory:", env }),
      );
      const plant = await gateway.call({
        trajectory_id: "t",
        turn: 0,
        call_id: "b1",
        tool: "bash_execute",
        arguments: { command: `mkdir -p .toolgate && ln -sf ${victim} .toolgate/audit.jsonl && echo planted` },
      });
      expect(plant.ok).toBe(true);
      await gateway.call({
        trajectory_id: "t",
        turn: 1,
        call_id: "b2",
        tool: "bash_execute",
        arguments: { command: "true" },
      });
      await gateway.close();
      expect(readFileSync(victim, "utf8")).toBe("# a shell rc file\n");
      const trail = readFileSync(join(defaultStateDir(ws, env), "audit.jsonl"), "utf8");
      expect([trail.includes('"call_id":"b1"'), trail.includes('"call_id":"b2"')]).toEqual([true, true]);
    },
  );
});

describe("a store in the workspace is never taken for toolgate's", () => {
  /** What an attacker leaves in `<ws>/.toolgate/state.db`: an approval of `note_delete {"name":"a"}`, already approved.
   * */
  async function plantApprovedDelete(ws: string): Promise<string> {
    const store = await openStore(`sqlite:${join(ws, ".toolgate", "state.db")}`);
    const planter = createGateway({ tools: [deleteNote], store, audit: false });
    const asked = await planter.call({
      trajectory_id: "t",
      turn: 0,
      call_id: "d1",
      tool: "note_delete",
      arguments: { name: "a" },
    });
    const id = asked.error!.detail!.approval_id as string;
    await planter.approvals.approve(id, { approver: "the agent" });
    await planter.close();
    return id;
  }

  it("a planted (or shipped) .toolgate/state.db holding an approved approval is not redeemed after a restart", async () => {
    const ws = tempDir("ws");
    process.env.NOTES_DIR = ws;
    writeFileSync(join(ws, "a.txt"), "precious\n");
    const approval_id = await plantApprovedDelete(ws);
    const gateway = keep(await gatewayFromSettings([deleteNote], { workspace: ws, env: userHome() }));
    const obs = await gateway.call({
      trajectory_id: "t",
      turn: 0,
      call_id: "d1",
      tool: "note_delete",
      arguments: { name: "a" },
      approval_id,
    });
    expect(obs.ok).toBe(false);
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("precious\n");
  });

  it("a shipped .toolgate/ named explicitly (--store sqlite:.toolgate/state.db) is refused: toolgate did not create it", async () => {
    const ws = tempDir("ws");
    process.env.NOTES_DIR = ws;
    writeFileSync(join(ws, "a.txt"), "precious\n");
    await plantApprovedDelete(ws);
    writeFileSync(join(ws, ".toolgate", ".toolgate-dir"), "a marker copied from anywhere\n");
    const started = gatewayFromSettings([deleteNote], {
      workspace: ws,
      store: "sqlite:.toolgate/state.db",
      env: userHome(),
    });
    await expect(started).rejects.toMatchObject({
      code: "unsafe_state_path",
      message: expect.stringMatching(
        new RegExp(
          `^the state folder ${ws}/\\.toolgate already exists and was not created by toolgate for this workspace \\(toolgate has no record of creating it .*\\)\\. A folder that came with the repository`,
        ),
      ),
    });
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("precious\n");
  });
});

describe("toolgate's own state is private and outside the workspace", () => {
  it("serve's defaults leave nothing in the workspace; files are 0600 in 0700 folders", async () => {
    const ws = tempDir("ws");
    const env = userHome();
    process.env.NOTES_DIR = ws;
    const gateway = keep(await gatewayFromSettings([readNote], { workspace: ws, env }));
    await gateway.call(read("c1"));
    const dir = defaultStateDir(ws, env);
    // SQLite's own files exist while the store is open.
    expect([mode(join(dir, "state.db-wal")), mode(join(dir, "state.db-shm"))]).toEqual(["600", "600"]);
    await gateway.close();
    expect(existsSync(join(ws, ".toolgate"))).toBe(false);
    expect([mode(dir), mode(join(dir, "state.db")), mode(join(dir, "audit.jsonl"))]).toEqual(["700", "600", "600"]);
  });

  it("explicit paths get the same modes: the folders toolgate creates 0700, the store, its WAL and the audit trail 0600", async () => {
    const ws = tempDir("ws");
    const out = tempDir("out");
    process.env.NOTES_DIR = ws;
    const gateway = keep(
      await gatewayFromSettings([readNote], {
        workspace: ws,
        store: `sqlite:${join(out, "db", "x.db")}`,
        audit: join(out, "log", "a.jsonl"),
        env: userHome(),
      }),
    );
    await gateway.call(read("c1"));
    expect(mode(join(out, "db", "x.db-wal"))).toBe("600");
    await gateway.close();
    expect([
      mode(join(out, "db")),
      mode(join(out, "db", "x.db")),
      mode(join(out, "log")),
      mode(join(out, "log", "a.jsonl")),
    ]).toEqual(["700", "600", "700", "600"]);
  });
});

describe("the capability key file is not in the agent's reach", () => {
  it("a key file inside the workspace is refused, saying where it is, why, and where to move it", async () => {
    const ws = tempDir("ws");
    const env = userHome();
    writeFileSync(join(ws, "keys.json"), JSON.stringify({ k1: Buffer.alloc(32, 7).toString("base64") }));
    const started = gatewayFromSettings([readNote], {
      workspace: ws,
      store: "memory:",
      audit: false,
      keys: join(ws, "keys.json"),
      env,
    });
    await expect(started).rejects.toMatchObject({
      code: "key_file_in_workspace",
      message: `the capability key file ${ws}/keys.json is inside the workspace ${ws}: anything the agent runs there can read it (e.g. bash_execute "base64 keys.json") and mint any capability. Move it outside the workspace, e.g. mkdir -p -m 700 ${env.XDG_CONFIG_HOME}/toolgate && mv ${ws}/keys.json ${env.XDG_CONFIG_HOME}/toolgate/keys.json, and pass --keys with the new path (or set TOOLGATE_KEYS); toolgate cap keygen without --out writes there`,
    });
  });

  it("so is one reached through a link in the workspace, and a link in the workspace to a key outside (the agent could re-point it)", async () => {
    const ws = tempDir("ws");
    const outside = tempDir("keys");
    writeFileSync(join(outside, "keys.json"), JSON.stringify({ k1: Buffer.alloc(32, 7).toString("base64") }));
    symlinkSync(join(outside, "keys.json"), join(ws, "keys.json"));
    const viaLink = gatewayFromSettings([readNote], {
      workspace: ws,
      store: "memory:",
      audit: false,
      keys: join(ws, "keys.json"),
      env: userHome(),
    });
    await expect(viaLink).rejects.toMatchObject({ code: "key_file_in_workspace" });
    symlinkSync(ws, join(outside, "ws-alias"));
    writeFileSync(join(ws, "inner.json"), "{}");
    const intoWorkspace = gatewayFromSettings([readNote], {
      workspace: ws,
      store: "memory:",
      audit: false,
      keys: join(outside, "ws-alias", "inner.json"),
      env: userHome(),
    });
    await expect(intoWorkspace).rejects.toMatchObject({ code: "key_file_in_workspace" });
  });
});

describe("the capability key file, when the workspace holds the home folder", () => {
  it("the refusal does not suggest a default key file that is inside the workspace too", async () => {
    const ws = tempDir("home-as-ws");
    const env = { XDG_STATE_HOME: join(tempDir("state"), "s"), XDG_CONFIG_HOME: join(ws, ".config") };
    writeFileSync(join(ws, "keys.json"), "{}");
    const started = gatewayFromSettings([readNote], {
      workspace: ws,
      store: "memory:",
      audit: false,
      keys: join(ws, "keys.json"),
      env,
    });
    await expect(started).rejects.toMatchObject({
      code: "key_file_in_workspace",
      message: expect.stringMatching(
        /Move it outside the workspace, e\.g\. mkdir -p -m 700 \/etc\/toolgate && mv \S+\/keys\.json \/etc\/toolgate\/keys\.json, and pass --keys with the new path \(or set TOOLGATE_KEYS\)$/,
      ),
    });
  });
});

describe("a store left in <workspace>/.toolgate/ by an earlier version", () => {
  it("is not read, and serve says so at start with the mv that keeps it", () => {
    const ws = tempDir("ws");
    const env = userHome();
    mkdirSync(join(ws, ".toolgate"));
    writeFileSync(join(ws, ".toolgate", "state.db"), "");
    const state = prepareState({ workspace: ws, env });
    const db = join(defaultStateDir(ws, env), "state.db");
    expect(state.notes).toEqual([
      `note: ${ws}/.toolgate/state.db is not used: toolgate keeps its state outside the workspace, in ${db}, where the agent cannot write. Anything in the workspace may have been written by the agent or shipped with the repository; if toolgate itself wrote that file and you trust it, stop toolgate and move it: mv ${ws}/.toolgate/state.db ${db}`,
    ]);
    expect(prepareState({ workspace: tempDir("ws"), env }).notes).toEqual([]);
  });
});
