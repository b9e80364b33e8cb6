import { describe, expect, it } from "vitest";
import { ZodError } from "zod";
import {
  initialState,
  parseStateChange,
  SessionState,
  StoredSessionState,
} from "../../../../../src/runtime/session/kernel/session-state";

const previous = SessionState.parse(initialState(1_000, 61_000));

describe("parseStateChange", () => {
  it("gives what SessionState.parse gives for a changed state: defaults applied, unknown fields dropped", () => {
    const lease = {
      lease_id: "1:d",
      driver_id: "d",
      epoch: 1,
      expires_at: 5_000,
      steps_at_start: 0,
    };
    const next = {
      ...previous,
      status: "running",
      epoch: 1,
      lease,
      last_replica: undefined,
      extra: "dropped",
    } as unknown as SessionState;
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
    expect(() =>
      parseStateChange({ ...previous, lease: { ...previous.lease, epoch: 0 } as never }, previous),
    ).toThrow(ZodError);
  });

  it("parses the whole state when there is no valid state to compare with", () => {
    expect(() => parseStateChange({ ...previous, schema_version: 2 } as never, undefined)).toThrow(
      ZodError,
    );
    expect(parseStateChange(previous, undefined)).toEqual(previous);
  });
});

/** A finished rollout's state as the code before `publication` had one name stored it (`sink`). */
const STORED_WITH_SINK = {
  schema_version: 1,
  status: "succeeded",
  termination_reason: "ENV_DONE",
  outcome: "policy",
  reward: 1,
  error: null,
  lease: null,
  epoch: 1,
  stalls: 0,
  handoffs: 0,
  step_count: 2,
  prompt_tokens: 40,
  completion_tokens: 12,
  llm_calls: 2,
  last_context_tokens: 30,
  last_context_messages: 4,
  last_replica: null,
  deadline: 61_000,
  last_activity_at: 3_000,
  updated_at: 4_000,
  finished_at: 3_500,
  attempt: 0,
  final_attempt: null,
  released: 0,
  revision: 7,
  sink: {
    status: "published",
    attempts: 2,
    last_error: null,
    published_at: 3_900,
    delivery: { checks: 1, next_check_at: 20_000, confirmed_at: null, gave_up: false },
  },
};

describe("StoredSessionState", () => {
  it("reads a state stored with its publication under `sink` as `publication`", () => {
    const state = StoredSessionState.parse(STORED_WITH_SINK);
    expect(state.publication).toEqual(STORED_WITH_SINK.sink);
    expect(state).not.toHaveProperty("sink");
    expect(state.revision).toBe(7);
    // The plain schema alone would have lost it: the publication would read as never published.
    expect(SessionState.parse(STORED_WITH_SINK).publication.status).toBe("none");
  });

  it("reads a state stored now as it is, and prefers `publication` when both keys are there", () => {
    const now = SessionState.parse({
      ...initialState(1_000, 61_000),
      publication: { ...STORED_WITH_SINK.sink, attempts: 3 },
    });
    expect(StoredSessionState.parse(now)).toEqual(now);
    expect(
      StoredSessionState.parse({ ...now, sink: STORED_WITH_SINK.sink }).publication.attempts,
    ).toBe(3);
  });
});
