/** Request bodies shaped like Codex CLI's (`codex exec`, wire_api "responses"), for the Responses translation tests. */

/** Codex's loose top-level fields, which the gateway accepts and ignores. */
export const codexNoise = {
  store: false,
  stream: true,
  include: ["reasoning.encrypted_content"],
  parallel_tool_calls: true,
  prompt_cache_key: "0199-session",
  reasoning: { effort: "medium", summary: "auto" },
  text: { verbosity: "medium" },
  service_tier: "auto",
  tool_choice: "auto",
};

/** Codex's tools: a function shell tool, the freeform apply_patch, and a hosted one. */
export const codexTools = [
  {
    type: "function",
    name: "shell",
    description: "Runs a shell command and returns its output.",
    strict: false,
    parameters: {
      type: "object",
      properties: {
        command: { type: "array", items: { type: "string" } },
        workdir: { type: "string" },
      },
      required: ["command"],
      additionalProperties: false,
    },
  },
  {
    type: "custom",
    name: "apply_patch",
    description: "Use the `apply_patch` tool to edit files.",
    format: { type: "grammar", syntax: "lark", definition: "start: begin_patch hunk+ end_patch" },
  },
  { type: "web_search" },
];

/** The first call of a task: developer message, environment context and the user's task. */
export function firstCall(extra: Record<string, unknown> = {}) {
  return {
    model: "policy-under-test",
    instructions: "You are Codex, a coding agent.",
    input: [
      {
        type: "message",
        role: "developer",
        content: [{ type: "input_text", text: "<permissions>sandbox</permissions>" }],
      },
      {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "<environment_context>cwd</environment_context>" }],
      },
      {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "create answer.txt containing 42" }],
      },
    ],
    tools: codexTools,
    ...codexNoise,
    ...extra,
  };
}
