import { describe, expect, it } from "vitest";
import { ZodError } from "zod";
import { initialState, parseStateChange, SessionState } from "../../../../src/runtime/session/session-state";

const previous = SessionState.parse(initialState(1_000, 61_000));

describe("parseStateChange", () => {
  it("gives what SessionState.parse gives for a changed state: defaults applied, unknown fields dropped", () => {
    const lease = { lease_id: "1:d", driver_id: "d", epoch: 1, expires_at: 5_000, steps_at_start: 0 };
    const next = { ...previous, status: "running", epoch: 1, lease, last_replica: undefined, extra: "dropped" } as unknown as SessionState;
    const checked = parseStateChange(next, previous);
    expect(checked).toEqual(SessionState.parse(next));
    expect(checked.lease).toEqual({ ...lease, attempts_at_start: 0 });
    expect(checked).not.toHaveProperty("extra");
    expect(Object.keys(checked)).toEqual(Object.keys(SessionState.parse(next)));
  });

  it("refuses a changed field that is invalid, naming it as the whole schema does", () => {
    const next = { ...previous, step_count: -1 };
    const error = (() => {
      try {
        parseStateChange(next, previous);
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(ZodError);
    expect((error as ZodError).issues[0]?.path).toEqual(["step_count"]);
    expect(() => parseStateChange({ ...previous, lease: { ...previous.lease, epoch: 0 } as never }, previous)).toThrow(ZodError);
  });

  it("parses the whole state when there is no valid state to compare with", () => {
    expect(() => parseStateChange({ ...previous, schema_version: 2 } as never, undefined)).toThrow(ZodError);
    expect(parseStateChange(previous, undefined)).toEqual(previous);
  });
});
