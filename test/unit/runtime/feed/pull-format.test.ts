import { describe, expect, it } from "vitest";
import { negotiatePullFormat } from "../../../../src/runtime/feed/pull-format";

const ARROW = "application/vnd.apache.arrow.stream";

describe("negotiatePullFormat", () => {
  it.each([
    [undefined, "json"],
    ["", "json"],
    ["*/*", "json"],
    ["application/json", "json"],
    ["application/*", "json"],
    [ARROW, "arrow"],
    [`${ARROW}, application/json`, "arrow"],
    [`${ARROW};q=0.5, application/json`, "json"],
    [`application/json;q=0.1, ${ARROW}`, "arrow"],
    [`${ARROW};q=0, */*`, "json"],
    ["not a media range", "json"],
    ["text/html", null],
    ["application/x-safetensors, application/problem+json", null],
    [`application/json;q=0, ${ARROW};q=0`, null],
  ])("Accept %j answers %s", (accept, format) => {
    expect(negotiatePullFormat(accept)).toBe(format);
  });
});
