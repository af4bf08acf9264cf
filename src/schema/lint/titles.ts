/** One line per rule, for reports (SARIF rule metadata, the per-rule count). */
export const RULE_TITLES: Readonly<Record<string, string>> = {
  TG000: "schema unusable: not a schema, a $ref that points nowhere, too deep or too large",
  TG001: "closed: every object sets additionalProperties: false",
  TG002: "required: every property without a default is in required",
  TG003: "bounded: numbers, strings, arrays and maps carry bounds",
  TG004: "units: quantities carry their unit in the name; positions say 0- or 1-based",
  TG005: "tagged unions: object unions share a required const discriminator",
  TG006: "side effect: the tool declares read-only, idempotent or destructive",
  TG007: "untyped bag: no object without declared properties, no open additionalProperties",
  TG008: "whole-file rewrite: a write tool takes an exact replacement, not whole content",
  TG009: "overlap: two tools could serve the same request",
  TG010: "naming and description: valid name, a description, every property described",
  TG011:
    "tool poisoning: no instructions to the model, imitated system tags, invisible text or other programs' credentials in descriptions",
};
