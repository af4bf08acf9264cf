/**
 * TG002 required — docs/schemas.md ("Required"): a description that
 * says an argument is required is a hint to the model; the required array is what the
 * validator enforces. And an optional field's description says what leaving it out means.
 */
import type { SchemaRule } from "../finding.js";
import { descriptionOf, isObjectSchema } from "../util.js";
import { isPlainObject } from "../../../core/json.js";
import { join } from "../../../core/pointer.js";

/** A description that says what an absent value means (then an optional field is a deliberate choice). */
const EXPLAINS_ABSENCE =
  /\b(optional|optionally|if omitted|when omitted|if absent|when absent|if not (set|given|provided|specified)|when not (set|given|provided|specified)|defaults? (to|is)|by default)\b/i;
const SAYS_REQUIRED = /\brequired\b/i;
const SAYS_NOT_REQUIRED = /\b(not|isn't|is not) required\b/i;

export const required: SchemaRule = (node, ctx) => {
  const s = node.schema;
  if (!isObjectSchema(s) || !isPlainObject(s.properties)) return;
  const req = new Set(Array.isArray(s.required) ? s.required.filter((x): x is string => typeof x === "string") : []);
  for (const [name, raw] of Object.entries(s.properties)) {
    if (req.has(name)) continue;
    const prop = ctx.resolve(raw, join(node.pointer, "properties", name))?.schema ?? raw;
    if (isPlainObject(prop) && "default" in prop) continue;
    const pointer = join(node.pointer, "properties", name);
    const desc = descriptionOf(raw) || descriptionOf(prop);
    // Cap the text the regexes read: a 5 MB description must not cost more than its first page.
    const head = desc.slice(0, 4096);
    if (SAYS_REQUIRED.test(head) && !SAYS_NOT_REQUIRED.test(head)) {
      ctx.report({
        rule: "TG002",
        severity: "error",
        pointer,
        message: `the description of ${name} says it is required, but required does not list it, so the validator lets a call omit it`,
        fix: `add "${name}" to required`,
      });
    } else if (EXPLAINS_ABSENCE.test(head)) {
      ctx.report({
        rule: "TG002",
        severity: "warning",
        pointer,
        message: `${name} is optional without a default; its description says what absence means, but the validator cannot apply it`,
        fix: `state the value used when ${name} is missing as its "default", or add it to required`,
      });
    } else {
      ctx.report({
        rule: "TG002",
        severity: "error",
        pointer,
        message: `${name} has no default and is not in required, and nothing says what a missing ${name} means`,
        fix: `add "${name}" to required, or give it a "default" (say in its description what the default means)`,
      });
    }
  }
  if (
    isPlainObject(s.properties) &&
    (s.additionalProperties === false || s.unevaluatedProperties === false) &&
    !isPlainObject(s.patternProperties)
  ) {
    for (const name of req) {
      if (!(name in s.properties)) {
        ctx.report({
          rule: "TG002",
          severity: "error",
          pointer: join(node.pointer, "required"),
          message: `required lists ${name}, which properties does not declare; with additionalProperties: false no call can pass`,
          fix: `declare ${name} under properties or remove it from required`,
        });
      }
    }
  }
};
