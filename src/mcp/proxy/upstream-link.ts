/**
 * The proxy's connection to its upstream, kept alive across upstream deaths: when the upstream
 * has gone, the next call starts (or reaches) it again, re-reads its catalog and refuses to use
 * it if the catalog changed (the gateway's ToolSpecs, schemas and authority levels were built
 * from the old one). What the link knows about an effect decides how a failure is thrown:
 * a request that never left the proxy is a `NoEffectError` (the key is released, the model is
 * told it did not run); one in flight when the upstream went away is a normal error (IN_DOUBT).
 */
import type { Client, Tool } from "@modelcontextprotocol/client";
import { NoEffectError } from "../../core/errors.js";
import { definitionHash, pinnedDefinition } from "../../idempotency/pins.js";
import { connectUpstream, describeTarget, listAllTools, type UpstreamTarget } from "./upstream.js";

/**
 * The whole catalog as served: every tool's full definition (`pinnedDefinition`, the description
 * included, since a changed description changes what the model is told to do). A change to any
 * of it needs a restart.
 */
export function catalogFingerprint(tools: Tool[]): string {
  return JSON.stringify(tools.map((t) => definitionHash(pinnedDefinition(t))));
}

export class UpstreamLink {
  private current: Client | null;
  private connecting: Promise<Client> | null = null;
  private closing = false;
  /** Set when the upstream came back with another catalog: no reconnect is tried again. */
  private changed = false;
  readonly target: string;

  constructor(
    private readonly upstream: UpstreamTarget,
    client: Client,
    private readonly fingerprint: string,
    private readonly log: (line: string) => void,
    /** Called with every client the link connects, the first included (e.g. to hear its notifications). */
    private readonly onConnect: (client: Client) => void = () => {},
  ) {
    this.target = describeTarget(upstream);
    this.current = client;
    this.watch(client);
  }

  /** The connected client, for inspection; null while the upstream is down. */
  get client(): Client | null {
    return this.current;
  }

  private watch(client: Client): void {
    this.onConnect(client);
    client.onclose = () => {
      if (this.current === client) this.current = null;
      if (!this.closing)
        this.log(
          `toolgate proxy: the upstream ${this.target} closed the connection; in-flight writes are IN_DOUBT, and the next call starts it again`,
        );
    };
  }

  /**
   * The live client (at once, without a promise, while it is connected), reconnecting first
   * when the upstream has gone. Rejects with `NoEffectError` when it cannot: nothing was sent,
   * so nothing happened.
   */
  get(tool: string): Client | Promise<Client> {
    return this.current ?? this.revive(tool);
  }

  private async revive(tool: string): Promise<Client> {
    if (this.closing)
      throw new NoEffectError(
        `toolgate proxy is shutting down, so ${tool} was not sent to the upstream MCP server and did not run`,
        "upstream_down",
      );
    if (this.changed) throw this.changedError(tool);
    this.connecting ??= this.reconnect().finally(() => (this.connecting = null));
    try {
      return await this.connecting;
    } catch (err) {
      if (err instanceof NoEffectError) throw new NoEffectError(err.message.replace("{tool}", tool), err.code);
      // Why, with the upstream's command line or URL (a password or token may be among its arguments), goes to the
      // operator's log only: the caller, and the model, read that it is down.
      this.log(`toolgate proxy: ${(err as Error).message}`);
      throw new NoEffectError(
        `the upstream MCP server is down and could not be started again (toolgate proxy's log says why), so ${tool} was not sent and did not run; the next call tries again, or restart toolgate proxy`,
        "upstream_down",
      );
    }
  }

  private changedError(tool: string): NoEffectError {
    return new NoEffectError(
      `the upstream MCP server came back with a different tool catalog, so ${tool} was not sent and did not run; restart toolgate proxy to serve the new catalog`,
      "upstream_catalog_changed",
    );
  }

  private async reconnect(): Promise<Client> {
    this.log(`toolgate proxy: starting the upstream ${this.target} again`);
    const client = await connectUpstream(this.upstream, undefined, this.log);
    let tools: Tool[];
    try {
      tools = await listAllTools(client);
    } catch (err) {
      await client.close().catch(() => {});
      throw err;
    }
    if (catalogFingerprint(tools) !== this.fingerprint) {
      this.changed = true;
      await client.close().catch(() => {});
      this.log(
        `toolgate proxy: the upstream ${this.target} came back with a different tool catalog; its tools stay unavailable until toolgate proxy is restarted`,
      );
      throw this.changedError("{tool}");
    }
    if (this.closing) {
      await client.close().catch(() => {});
      throw new NoEffectError(
        "toolgate proxy is shutting down, so {tool} was not sent and did not run",
        "upstream_down",
      );
    }
    this.watch(client);
    this.current = client;
    this.log(`toolgate proxy: the upstream ${this.target} is back (same catalog)`);
    return client;
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.connecting?.catch(() => {});
    await this.current?.close();
  }
}
