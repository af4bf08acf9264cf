/**
 * The frameworks are optional peer dependencies: an adapter imports its framework on first use, so
 * `toolgate` and the other entries never load it, and a framework that is not installed is
 * reported with the command that installs it.
 */
import { ToolgateError } from "../core/errors.js";

function isModuleNotFound(err: unknown, name: string): boolean {
  const e = err as NodeJS.ErrnoException | null;
  return (e?.code === "ERR_MODULE_NOT_FOUND" || e?.code === "MODULE_NOT_FOUND") && String(e.message).includes(name);
}

/**
 * Runs `load` (a literal `import("pkg")`, so the type comes from the package) and turns a missing
 * package into ToolgateError `framework_missing`, naming the entry, the package and how to install it.
 */
export async function importFramework<T>(
  entry: string,
  name: string,
  range: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (isModuleNotFound(err, name))
      throw new ToolgateError(
        "framework_missing",
        `${entry} needs the ${name} package, which is not installed; install it beside toolgate: npm install ${name}@${range}`,
        { cause: err },
      );
    throw err;
  }
}
