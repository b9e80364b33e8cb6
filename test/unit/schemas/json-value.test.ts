import { describe, expect, it } from "vitest";
import { z } from "zod";
import { JsonObject, JsonValue } from "../../../src/schemas/json";
import { Step } from "../../../src/schemas/step";

class Point {
  x = 1;
}
/** Values on both sides of JSON's edge: each must be accepted or refused exactly as `z.json()` does. */
const VALUES: unknown[] = [
  "text",
  0,
  -2.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  null,
  undefined,
  [1, "a", null, [false]],
  [1, undefined],
  [1, , 2],
  { a: 1, b: [true, { c: null }] },
  { a: undefined },
  { a: Number.NaN },
  Object.create(null),
  new Point(),
  new Date(0),
  new Map(),
  () => 1,
  10n,
  Symbol("s"),
  { deep: { list: [1, 2, { f: () => 1 }] } },
];

describe("JsonValue and JsonObject (z.json() checked in one walk)", () => {
  it("accept and refuse exactly what z.json() and z.record(z.string(), z.json()) do", () => {
    for (const [i, value] of VALUES.entries()) {
      expect(JsonValue.safeParse(value).success, `value ${i}`).toBe(
        z.json().safeParse(value).success,
      );
      expect(JsonObject.safeParse(value).success, `value ${i}`).toBe(
        z.record(z.string(), z.json()).safeParse(value).success,
      );
    }
  });

  it("name the place inside the value that is not JSON", () => {
    const result = Step.safeParse({
      step_id: "r/step/0",
      step_index: 0,
      action: "x",
      observation: {
        board: [
          [1, 2],
          [3, Number.NaN],
        ],
      },
    });
    expect(result.success).toBe(false);
    expect(result.error!.issues).toEqual([
      expect.objectContaining({
        path: ["observation", "board", 1, 1],
        message: "NaN is not a JSON number",
      }),
    ]);
    const info = Step.safeParse({
      step_id: "s",
      step_index: 0,
      action: 1,
      observation: 2,
      info: [],
    });
    expect(info.error!.issues[0]).toMatchObject({
      path: ["info"],
      message: "expected a JSON object",
    });
  });

  it("keep the defaults of the fields that use them", () => {
    const step = Step.parse({ step_id: "s", step_index: 0, action: null, observation: "o" });
    expect({ next: step.next_observation, info: step.info }).toEqual({ next: null, info: {} });
  });
});
