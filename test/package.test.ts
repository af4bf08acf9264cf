/** The package's exports map, as consumers resolve it. */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entryPoints, packageJson as pkg } from "./support/entries.js";
import { projectRoot } from "./support/require.js";

describe("exports map", () => {
  it("types first, then import, then a default that require() of ESM (Node ≥ 20.19, the engines floor) resolves", () => {
    expect(pkg.engines.node).toBe(">=20.19");
    expect(pkg.exports["."]).toEqual({
      types: "./dist/index.d.ts",
      import: "./dist/index.js",
      default: "./dist/index.js",
    });
    expect(Object.keys(pkg.exports["."] as object)[0]).toBe("types");
  });

  it("each subpath points at its built entry in the same shape, inside the published files", () => {
    expect(pkg.files).toContain("dist");
    for (const { subpath } of entryPoints.filter((e) => e.subpath !== ".")) {
      const built = `./dist/entries/${subpath.slice(2)}`;
      expect(pkg.exports[subpath], subpath).toEqual({
        types: `${built}.d.ts`,
        import: `${built}.js`,
        default: `${built}.js`,
      });
    }
  });
});

/**
 * The package as a user gets it: built with the project's build config into a temporary
 * `node_modules/toolgate` (package.json and dist, as "files" ships them), then every entry
 * imported by its name from a folder outside the package, and again from inside it (Node's
 * self-reference); its types are resolved by tsc the same way.
 */
describe("the built package", () => {
  let dir = "";
  let pkgDir = "";

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "toolgate-pkg-"));
    pkgDir = join(dir, "node_modules", pkg.name);
    mkdirSync(pkgDir, { recursive: true });
    const tsc = join(projectRoot, "node_modules/typescript/bin/tsc");
    const build = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", join(pkgDir, "dist")], {
      cwd: projectRoot,
      encoding: "utf8",
    });
    if (build.status !== 0) throw new Error(`the build failed:\n${build.stdout}${build.stderr}`);
    cpSync(join(projectRoot, "package.json"), join(pkgDir, "package.json"));
    // Its dependencies, where an installed package finds them.
    symlinkSync(join(projectRoot, "node_modules"), join(pkgDir, "node_modules"), "dir");
  }, 300_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The value names each entry exports, imported by name by a script in `where`. */
  const importedNames = (where: string): Record<string, string[]> => {
    const script = join(where, "import-entries.mjs");
    const specs = JSON.stringify(entryPoints.map((e) => e.name));
    writeFileSync(
      script,
      `const out = {};\nfor (const s of ${specs}) out[s] = Object.keys(await import(s)).sort();\nprocess.stdout.write(JSON.stringify(out));\n`,
    );
    const r = spawnSync(process.execPath, [script], { cwd: where, encoding: "utf8" });
    if (r.status !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout) as Record<string, string[]>;
  };

  const sourceNames = async (): Promise<Record<string, string[]>> => {
    const out: Record<string, string[]> = {};
    for (const e of entryPoints)
      out[e.name] = Object.keys((await import(join(projectRoot, e.source))) as object).sort();
    return out;
  };

  it("every entry imports by its name from another folder, with the values its source exports", async () => {
    expect(importedNames(dir)).toEqual(await sourceNames());
  }, 120_000);

  it("every entry imports by its name from inside the package (self-reference)", async () => {
    expect(importedNames(pkgDir)).toEqual(await sourceNames());
  }, 120_000);

  it("every entry's types resolve by its name (tsc, NodeNext)", () => {
    const lines = entryPoints.map((e, i) => `import * as e${i} from "${e.name}";\nexport type E${i} = typeof e${i};`);
    lines.push(`import type { Store } from "${pkg.name}/stores";\nexport type S = Store["kind"];`);
    writeFileSync(join(dir, "consumer.ts"), lines.join("\n") + "\n");
    const config = {
      compilerOptions: {
        module: "NodeNext",
        moduleResolution: "NodeNext",
        target: "ES2022",
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        typeRoots: [join(projectRoot, "node_modules/@types")],
        types: ["node"],
      },
      files: ["consumer.ts"],
    };
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config));
    const r = spawnSync(
      process.execPath,
      [join(projectRoot, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"],
      { cwd: dir, encoding: "utf8" },
    );
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  }, 120_000);
});
