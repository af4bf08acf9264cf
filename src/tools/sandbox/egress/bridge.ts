/**
 * The inside half of egress: the sandbox has a network namespace of its own (only its own
 * loopback), so a small forwarder started inside it, before the command and before the command's
 * limits, listens on its loopback at HTTP_PORT and SOCKS_PORT and carries each connection to the
 * proxy's unix sockets, bound into the envelope at SOCKET_DIR. It is Node (the binary toolgate
 * runs on, bound read-only when it is not under a system folder the envelope already shows), so
 * it needs no network tool the system may lack. It decides nothing: the host side does, and a
 * command that kills or replaces it only loses its own way out.
 */
import { dirname } from "node:path";

/** Where the proxy's sockets appear inside the envelope. */
export const SOCKET_DIR = "/run/toolgate";
export const HTTP_PORT = 3128;
export const SOCKS_PORT = 1080;
/** Where toolgate's node binary is bound when the envelope does not already show it. */
const NODE_INSIDE = `${SOCKET_DIR}/node`;
const SYSTEM = ["/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/"];

/**
 * The forwarder: prints one line once both ports listen (the shell waits for it), then relays.
 * Errors on either side end that pair only.
 */
export const BRIDGE_SCRIPT = `
const net = require("net");
const [dir, hp, sp] = process.argv.slice(1);
let up = 0;
for (const [port, sock] of [[+hp, dir + "/http.sock"], [+sp, dir + "/socks.sock"]]) {
  net.createServer({ noDelay: true }, (c) => {
    const u = net.connect(sock);
    const end = () => { c.destroy(); u.destroy(); };
    c.on("error", end).on("close", end);
    u.on("error", end).on("close", end);
    c.pipe(u).pipe(c);
  }).listen(port, "127.0.0.1", () => { if (++up === 2) process.stdout.write("ready\\n"); });
}
`;

/** The node binary as the command's envelope sees it, and the bind that puts it there if one is needed. */
export function nodeInside(execPath = process.execPath): { path: string; bind: string[] } {
  if (SYSTEM.some((d) => execPath.startsWith(d))) return { path: execPath, bind: [] };
  return { path: NODE_INSIDE, bind: ["--ro-bind", execPath, NODE_INSIDE] };
}

/**
 * Shell lines that start the forwarder and wait until it listens; `|| exit 126` in the caller
 * makes a forwarder that could not start a run in which nothing ran.
 */
export function bridgePrelude(node: string): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return (
    `exec 9< <(exec ${q(node)} -e ${q(BRIDGE_SCRIPT)} ${q(SOCKET_DIR)} ${HTTP_PORT} ${SOCKS_PORT} 2>/dev/null) && ` +
    `read -r _tg_ready <&9 && [ "$_tg_ready" = ready ] && exec 9<&- && unset _tg_ready`
  );
}

/** The proxy environment of the command: every spelling clients read, NO_PROXY for the sandbox's own loopback. */
export function proxyEnv(): Record<string, string> {
  const http = `http://127.0.0.1:${HTTP_PORT}`;
  const socks = `socks5h://127.0.0.1:${SOCKS_PORT}`;
  const none = "localhost,127.0.0.1,::1";
  return {
    HTTP_PROXY: http,
    HTTPS_PROXY: http,
    ALL_PROXY: socks,
    NO_PROXY: none,
    http_proxy: http,
    https_proxy: http,
    all_proxy: socks,
    no_proxy: none,
  };
}

/** The bwrap arguments that bind the proxy's sockets (and node where needed) into the envelope. */
export function bridgeArgs(
  sockets: { httpSocket: string; socksSocket: string },
  asRoot: boolean,
  node = nodeInside(),
): string[] {
  const perms = asRoot
    ? ["--perms", "0755", "--dir", dirname(SOCKET_DIR), "--perms", "0755", "--dir", SOCKET_DIR]
    : ["--dir", SOCKET_DIR];
  const env = Object.entries(proxyEnv()).flatMap(([k, v]) => ["--setenv", k, v]);
  // Public CA certificates (links into /usr/share), for clients that verify TLS with the system's store.
  const certs = asRoot ? ["--perms", "0755", "--dir", "/etc/ssl"] : [];
  return [
    ...certs,
    "--ro-bind-try",
    "/etc/ssl/certs",
    "/etc/ssl/certs",
    ...perms,
    "--bind",
    sockets.httpSocket,
    `${SOCKET_DIR}/http.sock`,
    "--bind",
    sockets.socksSocket,
    `${SOCKET_DIR}/socks.sock`,
    ...node.bind,
    ...env,
  ];
}
