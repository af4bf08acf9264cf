/**
 * The names and values an issue lists as allowed, and its "did you mean" answers (issues.ts).
 */
import { suggester } from "../core/closest.js";
import { isPlainObject } from "../core/json.js";
import { showValue } from "./received.js";

/** Values as an issue lists them: shown, at most 20, then how many more. */
export const listValues = (values: unknown[]) =>
  (values.length > 20
    ? [...values.slice(0, 20).map(showValue), `… ${values.length - 20} more`]
    : values.map(showValue)
  ).join(", ");

/**
 * Per schema location, what its issues always say: the allowed names (or values) and the
 * "did you mean" answers. Keyed by the schema object Ajv hands back with each error, which is
 * the compiled schema itself, so repeated failures at one location reuse the work.
 */
export interface Choices {
  list: string;
  suggest: (name: string) => string | undefined;
}
const propertyChoices = new WeakMap<object, Choices>();
const enumChoices = new WeakMap<object, Choices>();
const NO_CHOICES: Choices = { list: "none", suggest: () => undefined };
export const NO_VALUES: Choices = { list: "", suggest: () => undefined };

export function propertiesOf(properties: unknown): Choices {
  if (!isPlainObject(properties)) return NO_CHOICES;
  let choices = propertyChoices.get(properties);
  if (!choices) {
    const allowed = Object.keys(properties);
    const list =
      allowed.length === 0
        ? "none"
        : allowed.length > 30
          ? `${allowed.slice(0, 30).join(", ")}, …`
          : allowed.join(", ");
    choices = { list, suggest: suggester(allowed) };
    propertyChoices.set(properties, choices);
  }
  return choices;
}

export function enumOf(allowed: unknown[]): Choices {
  let choices = enumChoices.get(allowed);
  if (!choices) {
    choices = {
      list: listValues(allowed),
      suggest: suggester(allowed.filter((v): v is string => typeof v === "string")),
    };
    enumChoices.set(allowed, choices);
  }
  return choices;
}
