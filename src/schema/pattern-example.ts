/**
 * An example string for a simple `pattern` (every refusal of a value gives an example): a
 * schema often has none of its own, or only an empty default. The pattern is read by regex.ts;
 * anchors, literals, escapes, classes (their first item), groups, alternation (the first
 * branch) and quantifiers give an example, anything else (a negated class, lookaround, …)
 * yields no example rather than a wrong one, and so does one longer than MAX_EXAMPLE_CHARS. The
 * result is checked against the pattern itself.
 */
import {
  PatternReader,
  UnsupportedPattern,
  type Atom,
  type ClassItem,
  type PatternBuilder,
  type Property,
  type Shorthand,
} from "./regex.js";

/** The character a shorthand shows. */
const PICKS: Record<Shorthand, string> = { d: "0", w: "a", s: " ", D: "a", W: "-", S: "a" };

/** What a Unicode property shows: the first of these it matches. */
const PROPERTY_SAMPLES = ["a", "A", "0", " ", "-"];

function propertyPick(p: Property): string {
  let re: RegExp;
  try {
    re = new RegExp(`^\\${p.letter}{${p.name}}$`, "u");
  } catch {
    throw new UnsupportedPattern(`no property ${p.name}`);
  }
  const hit = PROPERTY_SAMPLES.find((c) => re.test(c));
  if (hit === undefined) throw new UnsupportedPattern(`no sample for ${p.name}`);
  return hit;
}

/** What one class item shows: a character, the start of a range, a shorthand's or property's pick. */
function itemPick(item: ClassItem): string {
  if (item.kind === "char") return String.fromCodePoint(item.cp);
  if (item.kind === "range") return String.fromCodePoint(item.from);
  return item.kind === "shorthand" ? PICKS[item.letter] : propertyPick(item);
}

function pick(atom: Atom): string {
  if (atom.kind === "dot") return "a";
  if (atom.kind !== "class") return itemPick(atom);
  const first = atom.items[0];
  // A negated class has no safe pick.
  if (atom.negated || first === undefined) throw new UnsupportedPattern("no example");
  return itemPick(first);
}

/**
 * The longest example given. A quantifier such as `a{999999999}` (a schema is anyone's, a proxied
 * server's included) would otherwise build a string of that length on the first refusal.
 */
export const MAX_EXAMPLE_CHARS = 256;

function repeated(item: string, times: number): string {
  if (item.length * times > MAX_EXAMPLE_CHARS) throw new UnsupportedPattern("example too long");
  return item.repeat(times);
}

const example: PatternBuilder<string> = {
  atom: pick,
  anchor: () => "",
  group: (body) => body,
  sequence: (items) => {
    const out = items.join("");
    if (out.length > MAX_EXAMPLE_CHARS) throw new UnsupportedPattern("example too long");
    return out;
  },
  // Later branches are read (to find the group's end) but not used.
  alternation: (branches) => branches[0]!,
  // Optional parts are included once: an example should show what the part looks like.
  repeat: (item, q) => repeated(item, Math.max(1, q.min)),
};

/** A non-empty string matching `pattern`, or undefined when the pattern is beyond this generator. */
export function exampleForPattern(pattern: string): string | undefined {
  let out: string;
  try {
    const reader = new PatternReader(pattern, example);
    out = reader.alternation();
    if (!reader.done()) return undefined;
  } catch (err) {
    if (err instanceof UnsupportedPattern) return undefined;
    throw err;
  }
  if (!out) return undefined;
  try {
    return new RegExp(pattern, "u").test(out) ? out : undefined;
  } catch {
    return undefined;
  }
}
