/**
 * How many 2026-07-28 requests one principal may have in flight at once over Streamable HTTP.
 *
 * A 2026-07-28 request is stateless: no session holds it, so the session bounds
 * (`http-sessions.ts`) do not count it, and the connection bounds alone would let one principal
 * keep every connection it may open busy with slow calls. So each principal (the grant its
 * bearer verifies as, else its peer — `Principal.quota`) holds at most `limit` slots of a kind:
 * requests (tools/call, tools/list, server/discover, …) and `subscriptions/listen` streams are
 * two kinds, each with its own bound, so long-lived listen streams never use up the slots a
 * principal's calls need, nor calls its streams'. One over the bound is answered at once, never
 * queued (HTTP 429, `Retry-After`, a JSON-RPC error naming the bound and the flag that raises it);
 * one principal at its bound takes nothing from another's. Notifications take no slot: a
 * `notifications/cancelled` must get through precisely when a principal is at its bound.
 *
 * A slot is held until the answer has been written (or the client has gone) and the request's
 * server has handed every answer it owes to its transport: a client that disconnects mid-call
 * frees its slot only once the call it started has ended.
 */
import type { Peer } from "./http-sessions.js";

export interface SlotKind {
  /** What a slot is, plural: `2026-07-28 requests`, `subscriptions/listen streams`. */
  noun: string;
  /** What a held one is: `in flight`, `open`. */
  state: string;
  /** The flag that sets the bound, e.g. `--max-requests-per-client`. */
  flag: string;
  /** What the client can do instead of retrying at once. */
  advice: string;
}

/** A taken slot: `hold()` adds one more reason to keep it, each `release` ends one (idempotent each). */
export interface Slot {
  hold(): () => void;
}

export type Taken = { ok: true; slot: Slot } | { ok: false; message: string; limit: number; held: number };

export class PrincipalSlots {
  private readonly held = new Map<string, number>();

  constructor(
    readonly limit: number,
    readonly kind: SlotKind,
  ) {}

  /** Slots `quota` holds now. */
  count(quota: Peer): number {
    return this.held.get(quota.key) ?? 0;
  }

  /** One slot for `quota`, or the refusal to send when it already holds `limit`. */
  take(quota: Peer): Taken {
    const held = this.count(quota);
    if (held >= this.limit) {
      const { noun, state, flag, advice } = this.kind;
      return {
        ok: false,
        limit: this.limit,
        held,
        message: `too many ${noun} at once for ${quota.label}: ${held} ${held === 1 ? "is" : "are"} ${state}, the most ${flag} allows (${this.limit}); ${advice}, retry after the Retry-After header's seconds, or start toolgate with a higher ${flag}`,
      };
    }
    this.held.set(quota.key, held + 1);
    let reasons = 0;
    let freed = false;
    const free = () => {
      if (freed) return;
      freed = true;
      const left = this.count(quota) - 1;
      if (left <= 0) this.held.delete(quota.key);
      else this.held.set(quota.key, left);
    };
    return {
      ok: true,
      slot: {
        hold() {
          reasons++;
          let ended = false;
          return () => {
            if (ended) return;
            ended = true;
            if (--reasons === 0) free();
          };
        },
      },
    };
  }
}
