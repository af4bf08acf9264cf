/**
 * The sessions of the HTTP endpoint: who opened each one, and how many there may be.
 *
 * A session belongs to the caller that opened it, its principal: the bearer credential it sent
 * (by a one-way hash of it, never the credential itself), else its peer address. A request that
 * names a session of another principal is answered exactly like one naming no session at all
 * (404), so a session id seen by someone else (a log, a proxy) opens nothing for them.
 *
 * Sessions hold server state (about 36 KiB each) until they close or idle out, so they are
 * bounded: at most `perClient` per principal and `total` in all, counting sessions still being
 * opened. A new session over either bound first closes the principal's (or, for the total, any
 * principal's) least recently active session that has no request open — its client gets 404
 * and starts a new one, as MCP clients do — and is refused when every such session is busy.
 */
import { createHash } from "node:crypto";
import type http from "node:http";
import { bearerToken } from "../server/meta.js";

/** Who is calling: `key` compares callers, `label` names them in approvals and logs. */
export interface Principal {
  key: string;
  label: string;
}

/** The caller of `req`: its bearer credential (hashed) when it sends one, else its peer address. */
export function principalOf(req: http.IncomingMessage): Principal {
  const bearer = bearerToken(req.headers.authorization);
  if (bearer !== undefined) {
    const digest = createHash("sha256").update("toolgate principal\0").update(bearer).digest("hex");
    return { key: `bearer:${digest}`, label: `bearer credential sha256:${digest.slice(0, 16)}` };
  }
  const address = (req.socket.remoteAddress ?? "unknown").replace(/^::ffff:(?=\d+\.)/, "");
  return { key: `peer:${address}`, label: `peer ${address}` };
}

export interface SessionLimits {
  /** Sessions open (or opening) at once, in all. */
  total: number;
  /** Sessions open (or opening) at once for one principal. */
  perClient: number;
}

/** What the table needs to know of a session. */
export interface Tracked {
  principal: Principal;
  /** Requests of this session not yet answered (an open GET stream counts). */
  open: number;
  /** When the last request arrived or ended. */
  lastActive: number;
  /** Set once the client's initialize made it a session with an id. */
  id?: string;
}

export type Admission<S> = { ok: true; evict: S[] } | { ok: false; status: 429 | 503; message: string };

export class SessionTable<S extends Tracked> {
  /** Every session, initialised or still opening. */
  private readonly all = new Set<S>();
  private readonly byId = new Map<string, S>();

  constructor(readonly limits: SessionLimits) {}

  get size(): number {
    return this.byId.size;
  }

  /** The session `id` if `principal` opened it; undefined for an unknown id and for another caller's. */
  lookup(id: string, principal: Principal): S | undefined {
    const s = this.byId.get(id);
    return s && s.principal.key === principal.key ? s : undefined;
  }

  /**
   * Makes room for one more session of `principal`: the idle sessions to close (already out of
   * the table, so a request for them gets 404 at once), or a refusal when there is no room.
   */
  admit(principal: Principal): Admission<S> {
    const evict: S[] = [];
    const mine = [...this.all].filter((s) => s.principal.key === principal.key);
    if (mine.length >= this.limits.perClient) {
      const victim = leastRecent(mine);
      if (!victim) {
        return { ok: false, status: 429, message: `too many sessions for this client: ${mine.length} are open (at most ${this.limits.perClient}) and each has a request in progress; end one (HTTP DELETE with its Mcp-Session-Id) or retry when one finishes` };
      }
      this.remove(victim);
      evict.push(victim);
    }
    if (this.all.size >= this.limits.total) {
      const victim = leastRecent([...this.all]);
      if (!victim) {
        return { ok: false, status: 503, message: `this server has no room for another session: ${this.all.size} are open (at most ${this.limits.total}) and each has a request in progress; retry later` };
      }
      this.remove(victim);
      evict.push(victim);
    }
    return { ok: true, evict };
  }

  /** Counts a session being opened (after `admit`). */
  add(session: S): void {
    this.all.add(session);
  }

  /** The session's initialize succeeded: requests may now name it by `id`. */
  initialised(session: S, id: string): void {
    if (!this.all.has(session)) return; // closed meanwhile
    session.id = id;
    this.byId.set(id, session);
  }

  remove(session: S): void {
    this.all.delete(session);
    if (session.id !== undefined && this.byId.get(session.id) === session) this.byId.delete(session.id);
  }

  /** Takes out and returns every initialised session with no request open since `before`. */
  takeIdle(before: number): S[] {
    const idle = [...this.byId.values()].filter((s) => s.open === 0 && s.lastActive <= before);
    for (const s of idle) this.remove(s);
    return idle;
  }

  /** Takes out and returns every session. */
  takeAll(): S[] {
    const every = [...this.all];
    this.all.clear();
    this.byId.clear();
    return every;
  }
}

/** The initialised session with no request open that was active longest ago, if any. */
function leastRecent<S extends Tracked>(sessions: readonly S[]): S | undefined {
  let best: S | undefined;
  for (const s of sessions) if (s.id !== undefined && s.open === 0 && (!best || s.lastActive < best.lastActive)) best = s;
  return best;
}
