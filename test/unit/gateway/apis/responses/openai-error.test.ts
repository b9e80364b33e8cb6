/** Unit: OpenAI's error shape for each status, as the Responses route answers failures. */
import { describe, expect, it } from "vitest";
import { openaiError } from "../../../../../src/gateway/apis/responses";

describe("openaiError", () => {
  it("answers 400 as invalid_request_error naming the param", () => {
    expect(openaiError(400, "Missing required parameter: 'input'.", "input")).toEqual({
      status: 400,
      body: {
        error: {
          message: "Missing required parameter: 'input'.",
          type: "invalid_request_error",
          param: "input",
          code: null,
        },
      },
    });
  });

  it("uses the real API's type and code for auth, rate limits and server faults", () => {
    const pair = (status: number) => {
      const { type, code } = openaiError(status, "m").body.error;
      return [type, code];
    };
    expect(pair(401)).toEqual(["invalid_request_error", "invalid_api_key"]);
    expect(pair(404)).toEqual(["invalid_request_error", null]);
    expect(pair(429)).toEqual(["requests", "rate_limit_exceeded"]);
    expect(pair(500)).toEqual(["server_error", null]);
    expect(pair(503)).toEqual(["server_error", null]);
  });

  it("lets the caller set the code", () => {
    expect(
      openaiError(404, "The model 'x' does not exist", "model", "model_not_found").body.error,
    ).toEqual({
      message: "The model 'x' does not exist",
      type: "invalid_request_error",
      param: "model",
      code: "model_not_found",
    });
  });
});
