import { describe, expect, it } from "vitest";
import { anthropicError, anthropicErrorOf } from "../../../../../src/gateway/apis/messages";

describe("anthropicError", () => {
  it("maps each gateway status to the API's status and error type", () => {
    const cases: Array<[number, number, string]> = [
      [400, 400, "invalid_request_error"],
      [401, 401, "authentication_error"],
      [403, 403, "permission_error"],
      [404, 404, "not_found_error"],
      [409, 400, "invalid_request_error"],
      [413, 413, "request_too_large"],
      [422, 400, "invalid_request_error"],
      [406, 406, "invalid_request_error"],
      [429, 429, "rate_limit_error"],
      [500, 500, "api_error"],
      [502, 502, "api_error"],
      [503, 503, "api_error"],
      [504, 504, "api_error"],
      [529, 529, "overloaded_error"],
      [200, 500, "api_error"],
    ];
    for (const [status, answered, type] of cases)
      expect(anthropicError(status, "m"), String(status)).toEqual({
        status: answered,
        body: { type: "error", error: { type, message: "m" } },
      });
  });

  it("keeps a thrown error's status and message, and hides anything else", () => {
    expect(
      anthropicErrorOf({ status: 404, message: "rollout r does not exist" }).body.error,
    ).toEqual({
      type: "not_found_error",
      message: "rollout r does not exist",
    });
    expect(anthropicErrorOf(new Error("secret detail"))).toEqual({
      status: 500,
      body: { type: "error", error: { type: "api_error", message: "internal error" } },
    });
  });
});
