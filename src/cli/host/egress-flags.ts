/**
 * serve's egress flags: `--egress-allow ENTRY` and `--egress-deny ENTRY` (each repeatable) and
 * `--egress-config FILE` (JSON: allow, deny, secrets, limits), merged into the coding catalog's
 * `sandbox.egress`. Secrets live only in the file: a flag would show them in the process list.
 */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { egressPolicy, type EgressConfig } from "../../tools/sandbox/egress/policy.js";
import { CliError } from "../io.js";

export interface EgressFlags {
  egressAllow?: string[];
  egressDeny?: string[];
  egressConfig?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function egressFlagOptions(cmd: Command): Command {
  return cmd
    .option(
      "--egress-allow <entry>",
      "let bash_execute reach this host through toolgate's proxy (repeatable; NAME, *.NAME, IPv4 or [IPv6], each with an optional :PORT or :LOW-HIGH; a call's capability must also grant connect on host:NAME:PORT when keys are configured)",
      collect,
    )
    .option("--egress-deny <entry>", "never let bash_execute reach this host, whatever allows it (repeatable)", collect)
    .option(
      "--egress-config <file>",
      'JSON file with bash_execute\'s egress: {"allow": [...], "deny": [...], "secrets": [{"host", "header", "value", "origin_tls"}], "limits": {...}}',
    );
}

/** The catalog's egress from the flags (null when none is given); `ownPorts` are the ports serve listens on. */
export function parseEgressFlags(flags: EgressFlags, ownPorts: number[]): EgressConfig | null {
  if (!flags.egressAllow?.length && !flags.egressDeny?.length && flags.egressConfig === undefined) return null;
  let file: Partial<EgressConfig> = {};
  if (flags.egressConfig !== undefined) {
    let text: string;
    try {
      text = readFileSync(flags.egressConfig, "utf8");
    } catch (err) {
      throw new CliError(`--egress-config ${flags.egressConfig} could not be read: ${(err as Error).message}`);
    }
    try {
      file = JSON.parse(text) as Partial<EgressConfig>;
    } catch (err) {
      throw new CliError(`--egress-config ${flags.egressConfig} is not JSON: ${(err as Error).message}`);
    }
    if (typeof file !== "object" || file === null || Array.isArray(file))
      throw new CliError(
        `--egress-config ${flags.egressConfig} must hold a JSON object like {"allow": ["registry.example.org:443"]}; received ${Array.isArray(file) ? "an array" : typeof file}`,
      );
    const known = ["allow", "deny", "secrets", "limits"];
    const extra = Object.keys(file).filter((k) => !known.includes(k));
    if (extra.length)
      throw new CliError(
        `--egress-config ${flags.egressConfig}: ${extra.join(", ")} is not a field; the fields are ${known.join(", ")}`,
      );
  }
  const config: EgressConfig = {
    ...file,
    allow: [...(file.allow ?? []), ...(flags.egressAllow ?? [])],
    deny: [...(file.deny ?? []), ...(flags.egressDeny ?? [])],
    ownPorts,
  };
  try {
    egressPolicy(config);
  } catch (err) {
    throw new CliError(`egress: ${(err as Error).message}`);
  }
  return config;
}
