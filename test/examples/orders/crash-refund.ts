/** The refund the crash test proposes, in the parent and in the child that dies. */
export const CRASH_REFUND = {
  trajectory_id: "t_crash",
  turn: 1,
  call_id: "refund-crash-1",
  tool: "refund_order",
  arguments: { order_id: "o_1", amount_cents: 1250, reason: "lamp flickers again" },
};
