/** How fields and types are named in observations. */

/** A field as the model wrote it: `since`, `items[0].name`, or `arguments` for the whole call. */
export function fieldLabel(pointer: string): string {
  if (pointer === "") return "arguments";
  let out = "";
  for (const raw of pointer.slice(1).split("/")) {
    const token = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    out += /^\d+$/.test(token) ? `[${token}]` : out === "" ? token : `.${token}`;
  }
  return out;
}

/** JSON types as a sentence says them. */
const TYPE_WORDS: Record<string, string> = {
  string: "a string",
  integer: "an integer",
  number: "a number",
  boolean: "true or false",
  object: "an object",
  array: "an array",
  null: "null",
};

export function typePhrase(type: unknown): string {
  const list = Array.isArray(type) ? type : [type];
  return list.map((t) => TYPE_WORDS[String(t)] ?? String(t)).join(" or ");
}
