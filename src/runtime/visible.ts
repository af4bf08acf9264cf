/**
 * Per-agent views: which tools a capability's holder is shown. A tool is shown when the
 * capability could grant a call of it — the right its effect needs (read for a read-only tool,
 * write otherwise), the tool among the capability's `tool:` names when it lists any, and its
 * `tool:NAME` within the objects when they are all tool objects (a capability with path, host,
 * repo or tenant objects may reach any tool whose call targets them, so those tools stay shown).
 * What is shown is a courtesy to the model's context, not the check: every call is still
 * granted or refused on its own (`grant.ts`).
 */
import type { CapabilityAuthority } from "../capability/authority.js";
import { parseObject, withinAny } from "../capability/objects.js";
import type { ToolSpec } from "../core/tool.js";

/** The names of `tools` the holder of `capability` is shown; an empty set when it does not verify now. */
export async function visibleTools(
  authority: CapabilityAuthority,
  tools: Iterable<ToolSpec>,
  capability: string,
): Promise<ReadonlySet<string>> {
  const inspection = await authority.inspect(capability);
  const grant = inspection.status === "valid" ? inspection.grant : null;
  const out = new Set<string>();
  if (grant === null) return out;
  const objects = grant.objects.map((o) => parseObject(o));
  const toolObjectsOnly = objects.length > 0 && objects.every((o) => o.kind === "tool");
  for (const t of tools) {
    const op = t.effect === "read" ? "read" : "write";
    if (!grant.rights.includes(op)) continue;
    if (grant.tools !== null && !grant.tools.includes(t.name)) continue;
    if (toolObjectsOnly && !withinAny(parseObject(`tool:${t.name}`), objects)) continue;
    out.add(t.name);
  }
  return out;
}
