/**
 * The byte path of an allowed connection: `reach` connects to the address the session checked
 * (bounded by the connect time limit), `relay` carries bytes both ways, counted against the
 * call's bounds, and cuts both sides at the connection's time limit.
 */
import { connect, type Socket } from "node:net";
import type { EgressEvent, EgressSession } from "./session.js";

/** Relays bytes both ways between the command's side and the host's, counted, bounded in time. */
export function relay(session: EgressSession, event: EgressEvent, inner: Socket, outer: Socket): void {
  const releases = [session.hold(inner), session.hold(outer)];
  const timer = setTimeout(() => {
    session.timedOut(event);
    inner.destroy();
    outer.destroy();
  }, session.limits.connection_ms);
  inner.on("data", (c: Buffer) => {
    if (!session.count(event, "out", c.length)) inner.destroy();
  });
  outer.on("data", (c: Buffer) => {
    if (!session.count(event, "in", c.length)) outer.destroy();
  });
  const end = () => {
    clearTimeout(timer);
    for (const r of releases) r();
    inner.destroy();
    outer.destroy();
  };
  inner.on("error", end).on("close", end);
  outer.on("error", end).on("close", end);
  inner.pipe(outer);
  outer.pipe(inner);
}

/** Connects to the checked address, bounded by the connect time limit. */
export function reach(session: EgressSession, address: string, port: number, family: 4 | 6): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: address, port, family, noDelay: true });
    const timer = setTimeout(
      () => s.destroy(new Error(`connecting took longer than ${session.limits.connect_ms} ms`)),
      session.limits.connect_ms,
    );
    s.once("connect", () => {
      clearTimeout(timer);
      resolve(s);
    });
    s.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
