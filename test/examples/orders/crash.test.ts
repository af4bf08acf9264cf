import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/idempotency/open.js";
import { tempDir } from "../../mcp/support.js";
import { CRASH_REFUND } from "./crash-refund.js";
import { ordersGateway } from "./support.js";

const child = fileURLToPath(new URL("./crash-child.ts", import.meta.url));
const LATER = 10 * 60_000;

// A gateway process killed (SIGKILL) after the refund was committed and before it answered: the
// retry finds the call's record in flight, then, once its lease has passed, in doubt; the probe
// finds the refund carrying the call's key and settles the record with it. Money moves once.
describe("refund_order across a crash between the database write and the answer", { timeout: 120_000 }, () => {
  it("is settled by the probe on retry and never refunds twice", async () => {
    const dir = tempDir("orders-crash");
    const storeUrl = `sqlite:${join(dir, "store.sqlite")}`;
    const first = ordersGateway({ dir, store: await openStore(storeUrl) });
    const cap = first.capability("acme", 5000);
    const asked = await first.gateway.call({ ...CRASH_REFUND, capability: cap });
    const approval_id = asked.error?.detail?.approval_id as string;
    await first.gateway.approvals.approve(approval_id, { approver: "support-lead" });
    await first.gateway.close();

    const proc = spawn(process.execPath, ["--import", "tsx", child, dir, approval_id, cap], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.on("exit", (_code, signal) => resolve(signal)));
    await new Promise<void>((resolve, reject) => {
      let out = "";
      proc.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("written\n")) resolve();
      });
      proc.on("exit", (code) => reject(new Error(`the child exited (${code}) before the refund was written: ${out}`)));
    });
    proc.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");

    const refunds = (g: ReturnType<typeof ordersGateway>) =>
      g.db().prepare("SELECT id, idempotency_key FROM refunds WHERE order_id = 'o_1' ORDER BY rowid").all() as Array<{
        id: string;
        idempotency_key: string | null;
      }>;
    // Right after the crash the record is in flight: the retry is refused and runs nothing.
    const soon = ordersGateway({ dir, store: await openStore(storeUrl) });
    const early = await soon.gateway.call({ ...CRASH_REFUND, approval_id, capability: cap });
    expect(early.error?.code).toBe("in_flight");
    expect(refunds(soon)).toHaveLength(3);
    await soon.gateway.close();

    // Past the lease the record reads in doubt, and the probe finds the refund under the call's key.
    const later = ordersGateway({ dir, store: await openStore(storeUrl), clock: () => Date.now() + LATER });
    const retried = await later.gateway.call({ ...CRASH_REFUND, approval_id, capability: cap });
    expect(retried.ok).toBe(true);
    expect(retried.replay).toBe(true);
    expect(retried.text).toMatch(
      /refund (r_[0-9a-f]{10}) of 12\.50 issued on order o_1; refundable balance now 0\.00; order version 7\./,
    );
    const rows = refunds(later);
    expect(rows).toHaveLength(3);
    const issued = rows.filter((r) => r.idempotency_key !== null);
    expect(issued).toHaveLength(1);
    expect(retried.text).toContain(issued[0]!.id);
    const record = await later.store.records.get(issued[0]!.idempotency_key!, Date.now() + LATER);
    expect(record?.state).toBe("COMPLETED");
    // And every retry after that is the stored answer.
    const again = await later.gateway.call({ ...CRASH_REFUND, approval_id, capability: cap });
    expect(again.replay).toBe(true);
    expect(again.output).toEqual(retried.output);
    expect(refunds(later)).toHaveLength(3);
    await later.gateway.close();
  });
});
