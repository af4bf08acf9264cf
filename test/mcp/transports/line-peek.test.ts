import { describe, expect, it } from "vitest";
import { peekRequest } from "../../../src/mcp/transports/line-peek.js";

describe("peekRequest: the id and method of a message known only by its two ends", () => {
  it("reads them from the head, member by member, stopping at the first object", () => {
    expect(peekRequest(`{ "jsonrpc" : "2.0", "id": 3, "method": "tools/call", "params": {"id": 99, "arg`, "")).toEqual({
      id: 3,
      method: "tools/call",
    });
    expect(peekRequest(`{"method":"tools/call","params":{"id":99,"x":"`, "")).toEqual({
      id: null,
      method: "tools/call",
    });
  });

  it("reads them backward from the tail, never from inside the arguments", () => {
    expect(peekRequest("", `aaa"}},"jsonrpc":"2.0","id":12}\r`)).toEqual({ id: 12 });
    expect(peekRequest("", `x\\"", "id": 5}}, "id" : "a\\"b" }`)).toEqual({ id: 'a"b' });
    expect(peekRequest(`{"method":"ping","params":{`, `{"id":7}}`)).toEqual({ id: null, method: "ping" });
  });

  it("takes only a string or a safe integer id, and a head that cuts a value short reads nothing from it", () => {
    expect(peekRequest(`{"id":1.5,"method":"m"}`, "")).toEqual({ id: null, method: "m" });
    expect(peekRequest(`{"id":[1],"method":"m"}`, "")).toEqual({ id: null });
    expect(peekRequest(`{"id":12`, "")).toEqual({ id: null });
    expect(peekRequest(`{"id":"ab`, "")).toEqual({ id: null });
    expect(peekRequest(`not json`, `neither`)).toEqual({ id: null });
  });
});
