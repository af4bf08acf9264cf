/**
 * The sessions of the HTTP endpoint: who opened each one, and how many there may be.
 *
 * A session belongs to the caller that opened it: the bearer credential it sent (by a one-way
 * hash of it, never the credential itself), else its peer address. A request that names a
 * session of another caller is answered exactly like one naming no session at all (404), so a
 * session id seen by someone else (a log, a proxy) opens nothing for them.
 *
 * Sessions hold server state (about 36 KiB each) until they close or idle out, so they are
 * bounded: at most `perClient` per principal and `total` in all, counting sessions still being
 * opened. The principal is who the caller is known to be, never what it says: with capability
 * keys, the issued grant its bearer token verifies as (every token attenuated from one grant is
 * one principal); otherwise — no keys, no bearer, or one that does not verify — its peer
 * (`peerOf`: every loopback address is one peer, this machine; an IPv6 peer is its /64). A new
 * session over either bound closes the principal's own least recently active session that has
 * no request open — its client gets 404 and starts a new one, as MCP clients do — and is refused
 * when it has none: a bound never closes another principal's session.
 */
import { createHash } from "node:crypto";
import type http from "node:http";
import { isIPv6 } from "node:net";
import type { CapabilityHolder } from "../../capability/authority.js";
import { escapeUntrusted } from "../../observation/escape.js";
import { bearerToken } from "../server/meta.js";
import { isLoopback } from "./http-guard.js";

/** A peer as the bounds count it: `key` compares peers, `label` names one in a refusal. */
export interface Peer {
  key: string;
  label: string;
}

/** Who is calling. */
export interface Principal {
  /** Who owns a session: the bearer credential's digest, else the exact peer address. */
  key: string;
  /** Whose share of the bounds a session counts against: the verified holder, else the peer. */
  quota: Peer;
  /** Names the caller in approvals and logs. */
  label: string;
}

const LOOPBACK: Peer = { key: "loopback", label: "this machine's clients (every loopback client counts as one peer)" };

/**
 * The peer at `address` as the bounds count it. Any process on this machine can connect from any
 * loopback address (127.0.0.0/8, ::1), so they are one peer; a host usually holds a whole IPv6
 * /64, so that is one peer too; an IPv4 address is itself.
 */
export function peerOf(address: string | undefined): Peer {
  const a = (address ?? "unknown").replace(/^::ffff:(?=\d+\.)/i, "");
  if (isLoopback(a)) return LOOPBACK;
  const groups = isIPv6(a) ? ipv6Groups(a) : null;
  if (groups) {
    const prefix = groups
      .slice(0, 4)
      .map((g) => g.toString(16))
      .join(":");
    return { key: `ipv6:${prefix}`, label: `peer ${prefix}::/64` };
  }
  return { key: `ip:${a}`, label: `peer ${a}` };
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, an IPv4 tail read as two groups). */
function ipv6Groups(address: string): number[] | null {
  let text = address.replace(/%.*$/, "");
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const fill = tail === undefined ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...Array.from({ length: fill }, () => "0"), ...right].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : null;
}

/**
 * The caller of `req`: its session owner by its bearer credential (hashed) when it sends one,
 * else its peer address; its quota that of `holder`, the grant its bearer verified as, if any.
 */
export function principalOf(req: http.IncomingMessage, holder: CapabilityHolder | null = null): Principal {
  const address = (req.socket.remoteAddress ?? "unknown").replace(/^::ffff:(?=\d+\.)/i, "");
  const quota = holder
    ? { key: `holder:${holder.key}`, label: `capability ${escapeUntrusted(holder.grant)}` }
    : peerOf(address);
  const bearer = bearerToken(req.headers.authorization);
  if (bearer !== undefined) {
    const digest = createHash("sha256").update("toolgate principal\0").update(bearer).digest("hex");
    return {
      key: `bearer:${digest}`,
      quota,
      label: holder ? quota.label : `bearer credential sha256:${digest.slice(0, 16)}`,
    };
  }
  return { key: `peer:${address}`, quota, label: `peer ${address}` };
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
   * Makes room for one more session of `principal`: the idle session of its own to close (already
   * out of the table, so a request for it gets 404 at once), or a refusal when there is no room.
   */
  admit(principal: Principal): Admission<S> {
    const mine = [...this.all].filter((s) => s.principal.quota.key === principal.quota.key);
    const full = mine.length >= this.limits.perClient ? "client" : this.all.size >= this.limits.total ? "total" : null;
    if (full === null) return { ok: true, evict: [] };
    const victim = leastRecent(mine);
    if (victim) {
      this.remove(victim);
      return { ok: true, evict: [victim] };
    }
    const who = principal.quota.label;
    const end = "HTTP DELETE and its Mcp-Session-Id header";
    if (full === "client") {
      return {
        ok: false,
        status: 429,
        message: `too many sessions for ${who}: ${mine.length} ${mine.length === 1 ? "is" : "are"} open, the most --max-sessions-per-client allows (${this.limits.perClient}), and each has a request in progress; end one with ${end}, retry when one finishes, or start toolgate with a higher --max-sessions-per-client`,
      };
    }
    const yours =
      mine.length === 0
        ? `none of them is an idle session of ${who}`
        : `each of the ${mine.length} of ${who} has a request in progress`;
    return {
      ok: false,
      status: 503,
      message: `this server has no room for another session: ${this.all.size} are open, the most --max-sessions allows (${this.limits.total}), and ${yours}; sessions of other callers are never closed to make room. End one of yours with ${end}, retry later, or start toolgate with a higher --max-sessions`,
    };
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
  for (const s of sessions)
    if (s.id !== undefined && s.open === 0 && (!best || s.lastActive < best.lastActive)) best = s;
  return best;
}
