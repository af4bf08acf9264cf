/**
 * A framework is an optional peer dependency: the adapter imports it on first use, and a missing
 * one is reported naming the entry, the package and the install command. The import below is a
 * real dynamic import of a package that is not installed.
 */
import { describe, expect, it } from "vitest";
import { importFramework } from "../../src/adapters/peer.js";
import { ToolgateError } from "../../src/core/errors.js";

describe("a framework that is not installed", () => {
  it("is reported naming the entry, the package and how to install it", async () => {
    const missing = "toolgate-test-framework-not-installed";
    const err = await importFramework("toolgate/ai-sdk", missing, "^7", () => import(missing)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolgateError);
    expect((err as ToolgateError).code).toBe("framework_missing");
    expect((err as Error).message).toBe(
      `toolgate/ai-sdk needs the ${missing} package, which is not installed; install it beside toolgate: npm install ${missing}@^7`,
    );
  });

  it("an error inside an installed framework is not mistaken for a missing one", async () => {
    const err = await importFramework("toolgate/ai-sdk", "ai", "^7", () => Promise.reject(new Error("boom"))).catch(
      (e: unknown) => e,
    );
    expect((err as Error).message).toBe("boom");
  });
});
