/**
 * @module The streaming events of one finished output item, in the order the Responses API sends
 * them (https://platform.openai.com/docs/api-reference/responses-streaming; shapes from the
 * `openai` package's `ResponseStreamEvent` types): `response.output_item.added`, the item's
 * content events, `response.output_item.done`. The item is whole before the first event (the
 * gateway streams from a finished reply), so each text goes out as one delta.
 */
import type { JsonObject } from "../../../schemas/json";
import type { OutputItem } from "./output-items";

/** A stream event before its `sequence_number` is stamped: `type` first, then its fields. */
export type PendingEvent = JsonObject & { type: string };

function reasoningEvents(item: OutputItem, at: JsonObject): PendingEvent[] {
  const summary = item.summary as Array<{ type: "summary_text"; text: string }>;
  const events: PendingEvent[] = [];
  summary.forEach((part, summary_index) => {
    const where = { ...at, summary_index };
    events.push(
      { type: "response.reasoning_summary_part.added", ...where, part: { ...part, text: "" } },
      { type: "response.reasoning_summary_text.delta", ...where, delta: part.text },
      { type: "response.reasoning_summary_text.done", ...where, text: part.text },
      { type: "response.reasoning_summary_part.done", ...where, part },
    );
  });
  return events;
}

function messageEvents(item: OutputItem, at: JsonObject): PendingEvent[] {
  const parts = item.content as Array<JsonObject & { text: string }>;
  const events: PendingEvent[] = [];
  parts.forEach((part, content_index) => {
    const where = { ...at, content_index };
    events.push(
      { type: "response.content_part.added", ...where, part: { ...part, text: "" } },
      { type: "response.output_text.delta", ...where, delta: part.text, logprobs: [] },
      { type: "response.output_text.done", ...where, text: part.text, logprobs: [] },
      { type: "response.content_part.done", ...where, part },
    );
  });
  return events;
}

/** The item as `output_item.added` shows it: started, its content still empty. */
function startedItem(item: OutputItem): JsonObject {
  switch (item.type) {
    case "reasoning":
      return { ...item, summary: [] };
    case "message":
      return { ...item, status: "in_progress", content: [] };
    case "function_call":
      return { ...item, status: "in_progress", arguments: "" };
    case "custom_tool_call":
      return { ...item, status: "in_progress", input: "" };
    case "local_shell_call":
      return { ...item, status: "in_progress" };
  }
}

function contentEvents(item: OutputItem, at: JsonObject): PendingEvent[] {
  switch (item.type) {
    case "reasoning":
      return reasoningEvents(item, at);
    case "message":
      return messageEvents(item, at);
    case "function_call": {
      const args = item.arguments as string;
      return [
        ...(args === ""
          ? []
          : [{ type: "response.function_call_arguments.delta", ...at, delta: args }]),
        {
          type: "response.function_call_arguments.done",
          ...at,
          name: item.name as string,
          arguments: args,
        },
      ];
    }
    case "custom_tool_call": {
      const input = item.input as string;
      return [
        ...(input === ""
          ? []
          : [{ type: "response.custom_tool_call_input.delta", ...at, delta: input }]),
        { type: "response.custom_tool_call_input.done", ...at, input },
      ];
    }
    case "local_shell_call":
      return [];
  }
}

/** The events of output item `item` at `output_index`, from `added` to `done`. */
export function itemEvents(item: OutputItem, output_index: number): PendingEvent[] {
  const at = { item_id: item.id, output_index };
  return [
    { type: "response.output_item.added", output_index, item: startedItem(item) },
    ...contentEvents(item, at),
    { type: "response.output_item.done", output_index, item },
  ];
}
