/**
 * @module The OpenAI Responses request body the gateway serves
 * (https://platform.openai.com/docs/api-reference/responses/create; the shapes follow the `openai`
 * npm package's `resources/responses/responses.d.ts`). Loose: fields the gateway has no use for
 * (Codex's `prompt_cache_key`, `store`, `include`, `parallel_tool_calls`, `reasoning`, `text`,
 * `service_tier`, an item's `id` or `status`) are accepted and ignored, as the real API accepts
 * them. Fields that need a response store are refused: the gateway keeps no responses, so
 * `previous_response_id`, `conversation` and `item_reference` could only be served by silently
 * dropping context, which would train on a prompt the harness never meant.
 */
import { z } from "zod";

const NO_STORE =
  "the gateway keeps no stored responses or items, so send the whole conversation in `input` (store: false)";

/** A text part, from the caller (`input_text`) or an earlier answer (`output_text`). */
const TextPart = z.looseObject({
  type: z.enum(["input_text", "output_text"]),
  text: z.string(),
});
/** A refusal the model gave earlier. */
const RefusalPart = z.looseObject({ type: z.literal("refusal"), refusal: z.string() });
/** An image or file: accepted, and sent to the model as a placeholder (the chat body is text only). */
const MediaPart = z.looseObject({
  type: z.enum(["input_image", "input_file"]),
  filename: z.string().nullable().optional(),
});

/** One part of a message's (or a tool output's) content list. */
export const ContentPart = z.discriminatedUnion("type", [TextPart, RefusalPart, MediaPart]);
export type ContentPart = z.infer<typeof ContentPart>;

/** Message content: a string or a list of parts. */
const Content = z.union([z.string(), z.array(ContentPart)]);

/** A message item: `developer` and `system` are instructions, `assistant` an earlier answer. */
export const MessageItem = z.looseObject({
  type: z.literal("message"),
  role: z.enum(["user", "assistant", "system", "developer"]),
  content: Content,
});
export type MessageItem = z.infer<typeof MessageItem>;

/** A function call the model made; `call_id` is the chat tool call id, unchanged. */
export const FunctionCallItem = z.looseObject({
  type: z.literal("function_call"),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});
export type FunctionCallItem = z.infer<typeof FunctionCallItem>;

/** A function call's result. */
export const FunctionCallOutputItem = z.looseObject({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1),
  output: Content,
});

/** A reasoning item; the gateway's own carry its turn reference in `encrypted_content`. */
export const ReasoningItem = z.looseObject({
  type: z.literal("reasoning"),
  summary: z.array(z.looseObject({ type: z.literal("summary_text"), text: z.string() })),
  content: z
    .array(z.looseObject({ type: z.literal("reasoning_text"), text: z.string() }))
    .nullable()
    .optional(),
  encrypted_content: z.string().nullable().optional(),
});
export type ReasoningItem = z.infer<typeof ReasoningItem>;

/** A call of a custom (freeform) tool, such as Codex's `apply_patch`. */
export const CustomToolCallItem = z.looseObject({
  type: z.literal("custom_tool_call"),
  call_id: z.string().min(1),
  name: z.string().min(1),
  input: z.string(),
});
export type CustomToolCallItem = z.infer<typeof CustomToolCallItem>;

/** A custom tool call's result. */
export const CustomToolCallOutputItem = z.looseObject({
  type: z.literal("custom_tool_call_output"),
  call_id: z.string().min(1),
  output: Content,
});

/** The `local_shell` tool's action. */
export const LocalShellAction = z.looseObject({
  type: z.literal("exec").optional(),
  command: z.array(z.string()),
  timeout_ms: z.int().nullable().optional(),
  working_directory: z.string().nullable().optional(),
});
export type LocalShellAction = z.infer<typeof LocalShellAction>;

/** A call of the `local_shell` tool. */
export const LocalShellCallItem = z.looseObject({
  type: z.literal("local_shell_call"),
  call_id: z.string().min(1),
  action: LocalShellAction,
});
export type LocalShellCallItem = z.infer<typeof LocalShellCallItem>;

/** A `local_shell` call's result; OpenAI's types name the call by `id`, some clients by `call_id`. */
export const LocalShellCallOutputItem = z
  .looseObject({
    type: z.literal("local_shell_call_output"),
    id: z.string().optional(),
    call_id: z.string().optional(),
    output: z.string(),
  })
  .refine((item) => Boolean(item.call_id ?? item.id), {
    message: "needs call_id (or id): the local_shell_call it answers",
    path: ["call_id"],
  });

/** A reference to a stored item: refused, there is no store. */
const ItemReference = z.looseObject({ type: z.literal("item_reference") }).superRefine((_, ctx) => {
  ctx.addIssue({
    code: "custom",
    path: ["type"],
    message: `item_reference is not supported: ${NO_STORE}`,
  });
});

const ITEM_TYPES = [
  "message",
  "function_call",
  "function_call_output",
  "reasoning",
  "custom_tool_call",
  "custom_tool_call_output",
  "local_shell_call",
  "local_shell_call_output",
];

/** An item without `type` is a message when it has a role (EasyInputMessage), else a reference. */
function withType(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value) || "type" in value)
    return value;
  return { ...value, type: "role" in value ? "message" : "item_reference" };
}

/** One `input` item. */
export const InputItem = z.preprocess(
  withType,
  z.discriminatedUnion(
    "type",
    [
      MessageItem,
      FunctionCallItem,
      FunctionCallOutputItem,
      ReasoningItem,
      CustomToolCallItem,
      CustomToolCallOutputItem,
      LocalShellCallItem,
      LocalShellCallOutputItem,
      ItemReference,
    ],
    { error: () => `unsupported item type; this gateway serves ${ITEM_TYPES.join(", ")}` },
  ),
);
export type InputItem = z.infer<typeof InputItem>;

/** A function tool. */
export const FunctionTool = z.looseObject({
  type: z.literal("function"),
  name: z.string().min(1),
  description: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  strict: z.boolean().nullable().optional(),
});
export type FunctionTool = z.infer<typeof FunctionTool>;

/** A custom (freeform text) tool, such as Codex's `apply_patch`. */
export const CustomTool = z.looseObject({
  type: z.literal("custom"),
  name: z.string().min(1),
  description: z.string().nullable().optional(),
  format: z
    .looseObject({
      type: z.string(),
      syntax: z.string().optional(),
      definition: z.string().optional(),
    })
    .nullable()
    .optional(),
});
export type CustomTool = z.infer<typeof CustomTool>;

/** The tool types the gateway translates, each checked by its own schema. */
const TRANSLATED_TOOLS: Record<string, z.ZodType> = {
  function: FunctionTool,
  custom: CustomTool,
  local_shell: z.looseObject({ type: z.literal("local_shell") }),
};

/**
 * Any tool: function, custom and local_shell are checked and translated; hosted ones (web_search,
 * file_search, mcp…, and any type added later) are accepted and ignored. A plain union would
 * report a bad function tool as "Invalid input" at `tools[i]`; checking by type names the field.
 */
export const Tool = z.looseObject({ type: z.string() }).superRefine((tool, ctx) => {
  const schema = TRANSLATED_TOOLS[tool.type];
  const checked = schema?.safeParse(tool);
  // A finished issue is a valid raw one (zod keeps its code, path and message); only the types differ.
  for (const issue of checked?.error?.issues ?? []) ctx.addIssue(issue as z.core.$ZodRawIssue);
});
export type Tool = z.infer<typeof Tool>;

/** `tool_choice`: a mode, or one named tool. */
export const ToolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.looseObject({ type: z.string(), name: z.string().optional() }),
]);
export type ToolChoice = z.infer<typeof ToolChoice>;

/** The Responses request body (`POST /v1/responses`). */
export const ResponsesRequest = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(InputItem)]),
  instructions: z.string().nullable().optional(),
  tools: z.array(Tool).nullable().optional(),
  tool_choice: ToolChoice.nullable().optional(),
  max_output_tokens: z.int().min(1).nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  stop: z
    .union([z.string(), z.array(z.string())])
    .nullable()
    .optional(),
  previous_response_id: z.null({ error: `not supported: ${NO_STORE}` }).optional(),
  conversation: z.null({ error: `not supported: ${NO_STORE}` }).optional(),
});
export type ResponsesRequest = z.infer<typeof ResponsesRequest>;
