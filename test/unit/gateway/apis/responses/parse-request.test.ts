/** Unit: Responses request bodies checked, the loose fields ignored and the bad ones refused with OpenAI's 400 naming the field. */
import { describe, expect, it } from "vitest";
import {
  parseResponsesRequest,
  ResponsesRequestError,
} from "../../../../../src/gateway/apis/responses";
import { firstCall } from "./codex-like";

function refusal(body: unknown): ResponsesRequestError {
  try {
    parseResponsesRequest(body);
  } catch (error) {
    expect(error).toBeInstanceOf(ResponsesRequestError);
    return error as ResponsesRequestError;
  }
  throw new Error("expected the body to be refused");
}

describe("parseResponsesRequest", () => {
  it("accepts a Codex-shaped body, its unknown fields included", () => {
    const request = parseResponsesRequest(firstCall());
    expect(request.model).toBe("policy-under-test");
    expect(request.input).toHaveLength(3);
    expect(request.prompt_cache_key).toBe("0199-session");
  });

  it("takes an item without `type` but with a role as a message (EasyInputMessage)", () => {
    const request = parseResponsesRequest({ model: "m", input: [{ role: "user", content: "hi" }] });
    expect(request.input).toEqual([{ type: "message", role: "user", content: "hi" }]);
  });

  it("names a missing field by its path, as param and in OpenAI's wording", () => {
    const error = refusal({
      model: "m",
      input: [{ type: "function_call_output", output: "ok" }],
    });
    expect(error.param).toBe("input[0].call_id");
    expect(error.message).toBe("Missing required parameter: 'input[0].call_id'.");
    expect(error.toResponse()).toEqual({
      status: 400,
      body: {
        error: {
          message: "Missing required parameter: 'input[0].call_id'.",
          type: "invalid_request_error",
          param: "input[0].call_id",
          code: null,
        },
      },
    });
  });

  it("names the field inside a tool that failed, not just the tool", () => {
    const error = refusal({
      model: "m",
      input: "hi",
      tools: [{ type: "function", parameters: {} }],
    });
    expect(error.param).toBe("tools[0].name");
  });

  it("names the field inside a content part that failed", () => {
    const error = refusal({
      model: "m",
      input: [{ type: "message", role: "user", content: [{ type: "input_text" }] }],
    });
    expect(error.param).toBe("input[0].content[0].text");
  });

  it("refuses previous_response_id and conversation: the gateway keeps no responses", () => {
    const previous = refusal({ model: "m", input: "hi", previous_response_id: "resp_1" });
    expect(previous.param).toBe("previous_response_id");
    expect(previous.message).toMatch(/keeps no stored responses/);
    expect(refusal({ model: "m", input: "hi", conversation: "conv_1" }).param).toBe("conversation");
    expect(
      parseResponsesRequest({ model: "m", input: "hi", previous_response_id: null }),
    ).toBeTruthy();
  });

  it("refuses an item_reference, typed or bare, for the same reason", () => {
    const typed = refusal({ model: "m", input: [{ type: "item_reference", id: "msg_1" }] });
    expect(typed.param).toBe("input[0].type");
    expect(typed.message).toMatch(/item_reference is not supported/);
    expect(refusal({ model: "m", input: [{ id: "msg_1" }] }).param).toBe("input[0].type");
  });

  it("refuses an item type it cannot translate, listing the ones it serves", () => {
    const error = refusal({ model: "m", input: [{ type: "computer_call_output", call_id: "c" }] });
    expect(error.param).toBe("input[0].type");
    expect(error.message).toMatch(/function_call_output/);
  });

  it("refuses a body that is not an object, and a bad sampling value", () => {
    expect(refusal([1, 2]).param).toBeNull();
    expect(refusal({ model: "m", input: "hi", temperature: 9 }).param).toBe("temperature");
    expect(refusal({ input: "hi" }).message).toBe("Missing required parameter: 'model'.");
  });
});
