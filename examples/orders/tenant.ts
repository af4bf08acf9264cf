/**
 * Whose data a call may see: the `tenant:` objects of the capability the call was sent with,
 * verified by the gateway, never an argument the model wrote. Every refusal that depends on
 * ownership says "not found" in the same words whether the row is another tenant's or missing.
 */
import type { CheckIssue, ToolContext } from "toolgate";

/** The tenants the caller's capability names; empty when it names none or none verifies. */
export async function callerTenants(ctx: ToolContext): Promise<string[]> {
  const caller = await ctx.caller?.();
  return (caller?.objects ?? []).filter((o) => o.startsWith("tenant:")).map((o) => o.slice("tenant:".length));
}

/** The one refusal of a call whose capability names no tenant (or does not verify). */
export function noTenant(): CheckIssue[] {
  return [
    {
      path: "",
      code: "no_tenant",
      message:
        "this call needs a capability naming the tenant whose orders it reads (an object tenant:ID); the call sent none that verifies",
      expected: "a capability with an object like tenant:acme",
      example: "toolgate cap issue --rights read --objects tenant:acme --ttl 8h",
    },
  ];
}

/** "Not found", identical for a missing row and another tenant's. */
export function notFound(field: string, id: string, how: string): CheckIssue[] {
  return [{ path: `/${field}`, code: "not_found", message: `${field} not found; ${how}`, received: id }];
}

/** Cents as the shop writes money: 1250 → "12.50". */
export function money(cents: number): string {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100).toLocaleString("en-US")}.${String(abs % 100).padStart(2, "0")}`;
}
