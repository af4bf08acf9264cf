/**
 * Lazy loading of a store's client package: the root import never loads `pg`,
 * `ioredis` or the native SQLite binding; the factory imports its driver on first use, and a
 * package that is not installed is reported with the command that installs it.
 */
import { ToolgateError } from "../../core/errors.js";

function isModuleNotFound(err: unknown, name: string): boolean {
  const e = err as NodeJS.ErrnoException | null;
  return (e?.code === "ERR_MODULE_NOT_FOUND" || e?.code === "MODULE_NOT_FOUND") && String(e.message).includes(name);
}

/**
 * Runs `load` (a literal `import("pkg")`, so the type comes from the package) and turns a
 * missing package into ToolgateError `store_driver_missing`: "install ioredis: npm install ioredis@5".
 */
export async function importDriver<T>(store: string, name: string, major: number, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (isModuleNotFound(err, name)) {
      throw new ToolgateError(
        "store_driver_missing",
        `the ${store} store needs the ${name} package, which is not installed; install ${name}: npm install ${name}@${major}`,
        { cause: err },
      );
    }
    throw err;
  }
}

/** A store URL with any password replaced by `***`, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, "//$1:***@");
  }
}
