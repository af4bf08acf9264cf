/**
 * The SOCKS5 side of the proxy (RFC 1928, no authentication, CONNECT only): the handshake is read
 * in bounded memory, every request is decided by the call's session, and a refusal is answered
 * "connection not allowed by ruleset" (the observation says why in full).
 */
import type { Socket } from "node:net";
import { reach, relay } from "./relay.js";
import type { EgressSession } from "./session.js";

/** SOCKS5 reply codes used here. */
const SOCKS = { ok: 0, failure: 1, ruleset: 2, unreachable: 4, refused: 5, command: 7, address: 8 } as const;
/** The longest greeting and request (255 methods; a 255-byte name). */
const SOCKS_MAX = 600;

export function socks5(session: EgressSession, sock: Socket): void {
  let buf = Buffer.alloc(0);
  let greeted = false;
  sock.on("error", () => sock.destroy());
  const reply = (code: number) => Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]);
  const onData = (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    if (buf.length > SOCKS_MAX || buf[0] !== 5) return void sock.destroy();
    if (!greeted) {
      if (buf.length < 2 || buf.length < 2 + buf[1]!) return;
      const methods = buf.subarray(2, 2 + buf[1]!);
      buf = buf.subarray(2 + buf[1]!);
      if (!methods.includes(0)) return void sock.end(Buffer.from([5, 0xff]));
      greeted = true;
      sock.write(Buffer.from([5, 0]));
      if (buf.length === 0) return;
    }
    if (buf.length < 5) return;
    const atyp = buf[3]!;
    const addrLen = atyp === 1 ? 4 : atyp === 4 ? 16 : atyp === 3 ? 1 + buf[4]! : -1;
    if (addrLen < 0) return void sock.end(reply(SOCKS.address));
    if (buf.length < 4 + addrLen + 2) return;
    sock.off("data", onData);
    sock.pause();
    const raw = buf.subarray(4, 4 + addrLen);
    const host =
      atyp === 1
        ? [...raw].join(".")
        : atyp === 4
          ? (raw.toString("hex").match(/.{4}/g) ?? []).join(":")
          : raw.subarray(1).toString("latin1");
    const port = buf.readUInt16BE(4 + addrLen);
    const rest = buf.subarray(4 + addrLen + 2);
    if (buf[1] !== 1) return void sock.end(reply(SOCKS.command));
    connectSocks(session, sock, host, port, rest, reply).catch(() => sock.destroy());
  };
  sock.on("data", onData);
}

async function connectSocks(
  session: EgressSession,
  sock: Socket,
  host: string,
  port: number,
  rest: Buffer,
  reply: (code: number) => Buffer,
): Promise<void> {
  const d = await session.decide(host, port, "socks5");
  if (!d.ok) return void sock.end(reply(d.denial ? SOCKS.ruleset : SOCKS.unreachable));
  let upstream: Socket;
  try {
    upstream = await reach(session, d.address, port, d.family);
  } catch (err) {
    d.event.error = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    return void sock.end(reply(d.event.error === "ECONNREFUSED" ? SOCKS.refused : SOCKS.unreachable));
  }
  if (sock.destroyed) return void upstream.destroy();
  sock.write(reply(SOCKS.ok));
  if (rest.length > 0 && session.count(d.event, "out", rest.length)) upstream.write(rest);
  relay(session, d.event, sock, upstream);
  sock.resume();
}
