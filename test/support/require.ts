/**
 * Tests that need a real service or binary call these. Where it is missing, the test is
 * skipped with a loud message — unless `CI=true`, where a missing requirement fails, so
 * CI can never go green by skipping the real components.
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnSync } from "node:child_process";
import net from "node:net";
import { getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";
import { FORWARDER_SCRIPT, inOwnPidNamespace } from "../../src/mcp/proxy/upstream-pidns.js";
import { networkInterfaces } from "node:os";

const here = dirname(fileURLToPath(import.meta.url));
export const projectRoot = resolve(here, "..", "..");
/** `../shared/testdata` beside the work tree (read in place, never copied). */
export const testdataDir = resolve(projectRoot, "..", "shared", "testdata");

export const inCI = process.env.CI === "true" || process.env.CI === "1";

/** Returns null when available, or the reason it is not (and throws under CI). */
function verdict(what: string, missing: string | null): string | null {
  if (missing === null) return null;
  const message = `[toolgate tests] ${what} is not available: ${missing}`;
  if (inCI) throw new Error(`${message} (CI=true: a missing requirement fails instead of skipping)`);
  console.warn(`\n*** SKIPPING: ${message} ***\n`);
  return message;
}

/** The shared testdata folder, or a skip reason. */
export function testdataAvailable(sub = ""): boolean {
  const dir = join(testdataDir, sub);
  return (
    verdict(
      `testdata ${dir}`,
      existsSync(dir) ? null : "folder not found (it lives in ../shared/testdata beside the project)",
    ) === null
  );
}

/** A binary on PATH (e.g. `bwrap`, `rg`), or a skip reason. */
/**
 * Whether a stdio upstream started here gets a PID namespace of its own (`upstream-pidns.ts`:
 * util-linux unshare, inside a user namespace when not root), or a skip reason.
 */
export function upstreamNamespaceAvailable(): boolean {
  const spawned = inOwnPidNamespace({ command: process.execPath, args: [] }, getDefaultEnvironment());
  const missing = spawned.args.includes(FORWARDER_SCRIPT)
    ? null
    : "unshare cannot make one here (not Linux, no setpriv/unshare/sh/env on PATH, user namespaces off, or no CAP_SYS_ADMIN)";
  return verdict("a PID namespace for a stdio upstream", missing) === null;
}

export function binaryAvailable(name: string, args: string[] = ["--version"]): boolean {
  const r = spawnSync(name, args, { stdio: "ignore" });
  return (
    verdict(
      `binary ${name}`,
      r.error
        ? `${name} not on PATH (apt-get install -y ${name === "bwrap" ? "bubblewrap" : name === "rg" ? "ripgrep" : name})`
        : null,
    ) === null
  );
}

/**
 * A TCP service (Redis, PostgreSQL) reachable on host:port. A local server answers at once and
 * a closed port is refused at once; the timeout only bounds a host that drops packets, so it is
 * generous: on a loaded machine a short one could expire before the worker sees the connect.
 */
export async function serviceAvailable(name: string, host: string, port: number): Promise<boolean> {
  const ok = await new Promise<boolean>((done) => {
    const socket = net.connect({ host, port });
    const finish = (v: boolean) => {
      socket.destroy();
      done(v);
    };
    socket.setTimeout(10_000, () => finish(false));
    socket.once("connect", () => finish(true));
    socket.once("error", () => finish(false));
  });
  return verdict(`${name} at ${host}:${port}`, ok ? null : "connection refused or timed out") === null;
}

export const REDIS_URL = process.env.TOOLGATE_TEST_REDIS_URL ?? "redis://127.0.0.1:6379/0";
export const POSTGRES_URL = process.env.TOOLGATE_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/**
 * An IPv4 address of this machine that is not loopback (a peer other than the loopback one, for
 * tests that need two peers on one machine), or null with a skip reason.
 */
export function nonLoopbackAddress(): string | null {
  const found = Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .find((a) => a.family === "IPv4" && !a.internal);
  verdict("a non-loopback IPv4 address", found ? null : "no network interface has one");
  return found?.address ?? null;
}
