/**
 * The terms TG009 compares tools by. A tool's text is its name plus its
 * description. Tokenising, in order:
 *   1. split identifiers at `_`, `-`, `.`, `/`, spaces and camelCase humps (`searchOrders` → search, orders);
 *   2. lowercase, keep runs of letters and digits;
 *   3. drop English stop words and words of one character;
 *   4. light stemming — strip one plural or verb ending: -ies → -y, -sses → -ss, -es after s/x/z/ch/sh,
 *      -s (not -ss, -us, -is); then -ing / -ed when at least 4 letters remain ("matching" → "match");
 *   5. map verbs of the same intent to one term (find/search/lookup/query → search,
 *      get/fetch/retrieve/read → get, remove/delete → delete, create/add/new → create,
 *      modify/update/change/edit → update, list/enumerate → list, run/execute → run),
 *      because synonyms are exactly how two tools come to serve one sentence (docs/schemas.md).
 */

const STOP = new Set(
  (
    "a an and are as at be been but by can could do does each either else for from has have if in into is it its " +
    "itself may more most must no not of on one only or other our should so such than that the their them then " +
    "there these they this those to too use used uses using via was we were what when where whether which while " +
    "who will with within without would you your all any also both how just like many much same some up out over"
  ).split(" "),
);

const SYNONYMS: Record<string, string> = {
  find: "search",
  lookup: "search",
  query: "search",
  seek: "search",
  fetch: "get",
  retrieve: "get",
  read: "get",
  obtain: "get",
  remove: "delete",
  erase: "delete",
  destroy: "delete",
  add: "create",
  new: "create",
  make: "create",
  insert: "create",
  modify: "update",
  change: "update",
  edit: "update",
  alter: "update",
  enumerate: "list",
  execute: "run",
  exec: "run",
  invoke: "run",
};

/** Light stemming (step 4 above). */
export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith("ies")) w = w.slice(0, -3) + "y";
  else if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.length > 4 && /(s|x|z|ch|sh)es$/.test(w)) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith("s") && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length >= 7 && w.endsWith("ing")) w = w.slice(0, -3);
  else if (w.length >= 6 && w.endsWith("ed")) w = w.slice(0, -2);
  return w;
}

/** The comparison terms of a piece of text (name or description), in order, repeats kept. */
export function terms(text: string): string[] {
  const spaced = text.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2");
  const out: string[] = [];
  for (const raw of spaced.toLowerCase().split(/[^a-z0-9]+/)) {
    if (raw.length < 2 || STOP.has(raw) || /^\d+$/.test(raw)) continue;
    const s = stem(raw);
    out.push(SYNONYMS[s] ?? SYNONYMS[raw] ?? s);
  }
  return out;
}
