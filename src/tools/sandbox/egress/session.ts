/**
 * One call's egress: every connection the sandbox asks the proxy for is decided here — the
 * call's capability, the operator's deny-list, then allow-list, then the addresses the name
 * resolves to on the host (address.ts) — and counted against the call's bounds. What was asked,
 * allowed or refused, and the bytes each connection carried, are kept for the audit trail and
 * the observation. The proxy connects to the address checked here, never resolving again.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import { refusedClass } from "./address.js";
import { entryMatchesName, entryNamesAddress, type EgressPolicy, type EgressSecret } from "./policy.js";

/** Why a connection was refused (the typed `sandbox_denied` entry's `reason`). */
export type EgressReason =
  | "not in capability"
  | "not allowed by operator"
  | "denied by operator"
  | "resolves to a private address"
  | "cap exceeded";

export type EgressProtocol = "connect" | "http" | "socks5";

/** One connection the command asked for, as the audit trail records it. */
export interface EgressEvent {
  host: string;
  port: number;
  protocol: EgressProtocol;
  allowed: boolean;
  reason?: EgressReason;
  /** The address connected to (allowed connections). */
  address?: string;
  bytes_out: number;
  bytes_in: number;
  /** Why an allowed connection failed or was cut (unreachable, timed out, cap), if it did. */
  error?: string;
}

/** A refused connection, for the model: what, why, and how it could be allowed. */
export interface EgressDenial {
  host: string;
  port: number;
  reason: EgressReason;
  message: string;
}

export type Decision =
  | { ok: true; address: string; family: 4 | 6; secret: EgressSecret | null; event: EgressEvent }
  | { ok: false; denial: EgressDenial; event: EgressEvent }
  /** Allowed, but the name does not resolve on the host. */
  | { ok: false; denial: null; error: string; event: EgressEvent };

export interface SessionOptions {
  policy: EgressPolicy;
  /**
   * The call's capability: resolves to null when it grants `connect` on `host:H:P`, else to why
   * not. Absent when the gateway holds no keys (then the operator's lists alone decide).
   */
  capability?: (host: string, port: number) => Promise<string | null>;
  /** Resolution on the host, all addresses (default: the system resolver). */
  resolve?: (host: string) => Promise<string[]>;
}

/** Events kept per call for the audit; the rest are counted. */
const MAX_EVENTS = 200;

const systemResolve = async (host: string) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** The host's own addresses, where toolgate's listening ports must stay out of reach. */
function ownAddresses(): Set<string> {
  const out = new Set<string>(["0.0.0.0", "::"]);
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) out.add(a.address.toLowerCase());
  return out;
}

export class EgressSession {
  readonly events: EgressEvent[] = [];
  readonly denials: EgressDenial[] = [];
  eventsDropped = 0;
  connections = 0;
  /** Connections to the proxy itself, refused or not: past `maxAccepted` they are closed unread. */
  accepted = 0;
  bytes = 0;
  private readonly sockets = new Set<{ destroy(err?: Error): void }>();
  private capHit: EgressDenial | null = null;

  constructor(private readonly options: SessionOptions) {}

  get limits() {
    return this.options.policy.limits;
  }

  /**
   * Connections the proxy reads in one call: four per allowed connection and 1,000 more, so a
   * command that floods it with requests it refuses cannot keep toolgate busy for the whole call.
   */
  get maxAccepted(): number {
    return 4 * this.limits.max_connections + 1000;
  }

  /** Decides one connection to `rawHost`:`port`. */
  async decide(rawHost: string, port: number, protocol: EgressProtocol): Promise<Decision> {
    const host = normaliseHost(rawHost);
    const event: EgressEvent = { host, port, protocol, allowed: false, bytes_out: 0, bytes_in: 0 };
    this.record(event);
    const refuse = (reason: EgressReason, message: string): Decision => {
      event.reason = reason;
      const denial = { host, port, reason, message };
      if (this.denials.length < 50) this.denials.push(denial);
      return { ok: false, denial, event };
    };
    const { policy } = this.options;
    const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
    if (!Number.isInteger(port) || port < 1 || port > 65535 || host === "")
      return refuse("not allowed by operator", `${where} is not a host and port the proxy can reach`);
    if (this.capHit) return refuse("cap exceeded", this.capHit.message);
    if (this.connections >= policy.limits.max_connections) {
      return refuse(
        "cap exceeded",
        `the call opened ${this.connections} connections, the most one call may (egress.limits.max_connections); do the work in smaller calls, or ask the operator to raise it`,
      );
    }
    if (this.options.capability) {
      const why =
        isIP(host) === 6
          ? "an IPv6 address cannot be granted as a host object"
          : await this.options.capability(host, port);
      if (why !== null)
        return refuse(
          "not in capability",
          `the call's capability does not grant connect on host:${host}:${port} (${why}); ask for a capability with the right connect on host:${host}:${port} (or host:${host} for every port)`,
        );
    }
    const denied = policy.deny.find((e) => entryMatchesName(e, host, port));
    if (denied)
      return refuse(
        "denied by operator",
        `${where} is on the operator's deny-list (${denied.text}); only the operator can lift it (egress deny-list, --egress-deny)`,
      );
    if (!policy.allow.some((e) => entryMatchesName(e, host, port)))
      return refuse(
        "not allowed by operator",
        `${where} is not on the operator's allow-list; the operator can allow it with --egress-allow ${where} (or egress.allow in the configuration)`,
      );
    let addresses: string[];
    try {
      addresses = isIP(host)
        ? [host]
        : await withTimeout(this.resolve(host), policy.limits.connect_ms, `resolving ${host}`);
    } catch (err) {
      event.allowed = true;
      event.error = `resolution failed: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
      return {
        ok: false,
        denial: {
          host,
          port,
          reason: "not allowed by operator",
          message: `${host} does not resolve on the host (${event.error})`,
        },
        event,
      };
    }
    let refusedAt: string | null = null;
    let refusedWhy = "";
    const own = policy.ownPorts.has(port) ? ownAddresses() : null;
    for (const address of addresses) {
      const deniedAddress = policy.deny.find((e) => entryNamesAddress(e, address, port));
      if (deniedAddress)
        return refuse(
          "denied by operator",
          `${where} resolves to ${address}, which the operator's deny-list names (${deniedAddress.text})`,
        );
      const cls = refusedClass(address);
      const explicit = policy.allow.some((e) => entryNamesAddress(e, address, port));
      if (own?.has(address.toLowerCase()) || (own && cls === "loopback")) {
        refusedAt = address;
        refusedWhy = `this host's own address, where toolgate itself listens on port ${port}`;
        continue;
      }
      if (cls !== null && !explicit) {
        refusedAt ??= address;
        refusedWhy ||= `a ${cls} address`;
        continue;
      }
      this.connections++;
      event.allowed = true;
      event.address = address;
      const secret =
        policy.secrets.find(
          (s) => entryMatchesName(s.entry, host, port) || entryMatchesName(s.entry, host, s.origin_tls ? 443 : port),
        ) ?? null;
      return { ok: true, address, family: isIP(address) as 4 | 6, secret, event };
    }
    const explain = refusedWhy.startsWith("this host's own")
      ? "toolgate's own ports are never reachable from the sandbox"
      : `the operator can allow that address explicitly with --egress-allow ${refusedAt!.includes(":") ? `[${refusedAt}]` : refusedAt}:${port}`;
    return refuse(
      "resolves to a private address",
      `${where} resolves to ${refusedAt} (${refusedWhy}), which the proxy refuses behind a name; ${explain}`,
    );
  }

  /** The secret the operator configured for `host`:`port`, if any. */
  secretFor(host: string, port: number): EgressSecret | null {
    const h = normaliseHost(host);
    return this.options.policy.secrets.find((s) => entryMatchesName(s.entry, h, port)) ?? null;
  }

  /** Counts `n` bytes of `event`'s connection; past the call's byte bound every connection is cut. */
  count(event: EgressEvent, direction: "in" | "out", n: number): boolean {
    if (direction === "in") event.bytes_in += n;
    else event.bytes_out += n;
    this.bytes += n;
    if (this.bytes <= this.limits.max_bytes) return true;
    if (!this.capHit) {
      this.capHit = {
        host: event.host,
        port: event.port,
        reason: "cap exceeded",
        message: `the call's connections carried more than ${this.limits.max_bytes} bytes, the most one call may (egress.limits.max_bytes); every connection was cut. Download less per call, or ask the operator to raise it`,
      };
      this.denials.push(this.capHit);
      event.error = "cut at the call's byte bound";
      for (const s of this.sockets) s.destroy();
    }
    return false;
  }

  /** Records that `event`'s connection was cut at the per-connection time limit (a typed denial). */
  timedOut(event: EgressEvent): void {
    if (event.error) return;
    event.error = `cut at the connection time limit of ${this.limits.connection_ms} ms`;
    if (this.denials.length < 50)
      this.denials.push({
        host: event.host,
        port: event.port,
        reason: "cap exceeded",
        message: `the connection was open longer than ${this.limits.connection_ms} ms, the most one connection may (egress.limits.connection_ms), and was cut; fetch less per connection, or ask the operator to raise it`,
      });
  }

  /** Keeps `socket` to cut it when the call ends or passes its bounds; returns its release. */
  hold(socket: { destroy(err?: Error): void }): () => void {
    this.sockets.add(socket);
    return () => this.sockets.delete(socket);
  }

  /** Ends every connection still open (the call is over). */
  close(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  private record(event: EgressEvent): void {
    if (this.events.length < MAX_EVENTS) this.events.push(event);
    else this.eventsDropped++;
  }

  private resolve(host: string): Promise<string[]> {
    return (this.options.resolve ?? systemResolve)(host);
  }
}

/** Lower-cased, without one trailing dot or IPv6 brackets. */
export function normaliseHost(raw: string): string {
  let h = String(raw).toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  if (h.endsWith(".")) h = h.slice(0, -1);
  return isIP(h) || /^[a-z0-9.-]{1,253}$/.test(h) ? h : "";
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
