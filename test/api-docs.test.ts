/**
 * The public API is what docs/api.md lists. Every entry point in package.json "exports" has a
 * source file (`src/index.ts`, `src/entries/NAME.ts`) and a section `## \`toolgate/NAME\`` in
 * docs/api.md; every value the entry exports at runtime is a bullet of its section
 * (`- \`name\`…`), and every bullet names a value the entry exports. Types are checked one way
 * only: a type named on a section's "Types:" lines must be exported by that entry's source.
 * Adding, moving or removing a public name therefore means editing the page a user reads.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { entryPoints as entries } from "./support/entries.js";
import { projectRoot } from "./support/require.js";

interface Section {
  values: string[];
  types: string[];
}

/** The sections of an API page: `## \`ENTRY\`` headings, their bullets' leading names and their "Types:" names. */
function parseApiDoc(text: string): Map<string, Section> {
  const sections = new Map<string, Section>();
  let current: Section | null = null;
  let inTypes = false;
  for (const line of text.split("\n")) {
    const heading = /^## `([^`]+)`\s*$/.exec(line);
    if (heading) {
      current = { values: [], types: [] };
      sections.set(heading[1]!, current);
      inTypes = false;
      continue;
    }
    if (line.startsWith("#")) {
      current = null;
      continue;
    }
    if (!current) continue;
    const bullet = /^- `([A-Za-z_$][\w$]*)/.exec(line);
    if (bullet) current.values.push(bullet[1]!);
    if (line.startsWith("Types:")) inTypes = true;
    else if (line.trim() === "") inTypes = false;
    if (inTypes) for (const m of line.matchAll(/`([A-Za-z_$][\w$]*)`/g)) current.types.push(m[1]!);
  }
  return sections;
}

/** What is wrong between one entry's exports and its section of the page, one sentence each. */
function apiProblems(
  entry: string,
  section: Section | undefined,
  values: readonly string[],
  types: readonly string[],
): string[] {
  if (!section) return [`docs/api.md has no section "## \`${entry}\`"; add one listing the entry's values`];
  const problems: string[] = [];
  const listed = new Set(section.values);
  for (const v of values)
    if (!listed.has(v))
      problems.push(
        `${entry} exports ${v}, which docs/api.md does not list under ## \`${entry}\`; add a line "- \`${v}\` — …" there`,
      );
  const exported = new Set(values);
  for (const v of section.values)
    if (!exported.has(v))
      problems.push(
        `docs/api.md lists ${v} under ## \`${entry}\`, but ${entry} exports no such value; remove the line or export it`,
      );
  const exportedTypes = new Set(types);
  for (const t of section.types)
    if (!exportedTypes.has(t))
      problems.push(`docs/api.md names the type ${t} under ## \`${entry}\`, but ${entry} exports no such type`);
  for (const v of section.values.filter((v, i, all) => all.indexOf(v) !== i))
    problems.push(`docs/api.md lists ${v} twice under ## \`${entry}\``);
  return problems;
}

/** An entry file's exports as written: its type-only names, and any `export *` (which no entry may use). */
function entrySource(file: string): { types: string[]; star: boolean } {
  const source = ts.createSourceFile(file, readFileSync(join(projectRoot, file), "utf8"), ts.ScriptTarget.Latest);
  const types: string[] = [];
  let star = false;
  for (const node of source.statements) {
    if (!ts.isExportDeclaration(node)) continue;
    if (!node.exportClause || !ts.isNamedExports(node.exportClause)) {
      star = true;
      continue;
    }
    for (const el of node.exportClause.elements) if (node.isTypeOnly || el.isTypeOnly) types.push(el.name.text);
  }
  return { types, star };
}

const doc = parseApiDoc(readFileSync(join(projectRoot, "docs/api.md"), "utf8"));

describe("the public API, as docs/api.md lists it", () => {
  it("every entry point has its source file, and every file in src/entries/ is an entry point", () => {
    const files = readdirSync(join(projectRoot, "src/entries")).map((f) => `src/entries/${f}`);
    expect(files.sort()).toEqual(
      entries
        .map((e) => e.source)
        .filter((f) => f !== "src/index.ts")
        .sort(),
    );
  });

  it("docs/api.md has one section per entry point and no other", () => {
    expect([...doc.keys()].sort()).toEqual(entries.map((e) => e.name).sort());
  });

  it.each(entries)(
    "$name: every value it exports is documented, and every documented name is exported",
    async ({ name, source: file }) => {
      const mod = (await import(join(projectRoot, file))) as Record<string, unknown>;
      const { types, star } = entrySource(file);
      expect(star, `${file} uses export *; list the names instead`).toBe(false);
      expect(apiProblems(name, doc.get(name), Object.keys(mod), types)).toEqual([]);
    },
  );

  it("the check names an undocumented value, a documented value that is not exported, and a stale type", () => {
    const section = parseApiDoc(
      "## `toolgate/x`\n\n- `kept` — one.\n- `gone` — two.\n\nTypes: `Kept`,\n`Gone`.\n\n## Other\n\n- `ignored` — not an entry.\n",
    ).get("toolgate/x");
    expect(section).toEqual({ values: ["kept", "gone"], types: ["Kept", "Gone"] });
    expect(apiProblems("toolgate/x", section, ["kept", "added"], ["Kept"])).toEqual([
      'toolgate/x exports added, which docs/api.md does not list under ## `toolgate/x`; add a line "- `added` — …" there',
      "docs/api.md lists gone under ## `toolgate/x`, but toolgate/x exports no such value; remove the line or export it",
      "docs/api.md names the type Gone under ## `toolgate/x`, but toolgate/x exports no such type",
    ]);
    expect(apiProblems("toolgate/y", undefined, ["a"], [])).toEqual([
      'docs/api.md has no section "## `toolgate/y`"; add one listing the entry\'s values',
    ]);
  });

  it("every import in README's and docs/api.md's code names what that entry exports", async () => {
    const exported = new Map<string, Set<string>>();
    for (const e of entries)
      exported.set(
        e.name,
        new Set([
          ...Object.keys((await import(join(projectRoot, e.source))) as object),
          ...entrySource(e.source).types,
        ]),
      );
    const wrong: string[] = [];
    for (const page of ["README.md", "docs/api.md"]) {
      const text = readFileSync(join(projectRoot, page), "utf8");
      for (const m of text.matchAll(/^import (?:type )?\{([^}]*)\} from "([^"]+)";/gm)) {
        if (!m[2]!.startsWith("toolgate")) continue;
        const names = exported.get(m[2]!);
        if (!names) wrong.push(`${page}: ${m[2]} is not an entry point`);
        else
          for (const n of m[1]!
            .split(",")
            .map((s) => s.trim().replace(/^type /, ""))
            .filter(Boolean))
            if (!names.has(n)) wrong.push(`${page}: ${m[2]} exports no ${n}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("README's API section links docs/api.md and names every entry point", () => {
    const readme = readFileSync(join(projectRoot, "README.md"), "utf8");
    const api = /^## API\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(readme)?.[1] ?? "";
    expect(api).toContain("(docs/api.md)");
    expect(entries.map((e) => e.name).filter((n) => !api.includes(`\`${n}\``))).toEqual([]);
  });
});
