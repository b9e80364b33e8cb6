/**
 * @module Finding the shell tool in a request's own tool list and filling its arguments from its
 * JSON schema, so the simulator calls each harness's tool the way that harness declares it:
 * Claude Code's `Bash` {command: string}, opencode's `bash` {command: string, description: string
 * (required)}, Codex's `shell` {command: string[]} or `exec_command` {cmd: string}.
 */

/** A tool as a request offers it: a chat `tools` entry, or a JSON line of a ChatML `<tools>` block. */
export interface OfferedTool {
  function: { name: string; parameters?: Record<string, unknown> | null };
}

/** A shell tool the simulator can call, and the arguments that run a script with it. */
export interface ShellTool {
  name: string;
  /** The call's arguments for `script` (a whole bash script, newlines included). */
  argumentsFor(script: string): Record<string, unknown>;
}

/** Names harnesses give their shell tool (Claude Code, opencode, Codex's several generations). */
const SHELL_NAME = /^(bash|shell|shell_command|exec_command|local_shell)$/i;

/** What a required parameter other than the command gets when the schema offers no default. */
const DESCRIPTION = "Run the solution";

/** A timeout generous enough for any task's script, in ms (Claude Code's and opencode's unit). */
const TIMEOUT_MS = 120_000;

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The JSON types a property schema allows (`type` as a string or a list, or its `anyOf`/`oneOf`). */
function typesOf(schema: Schema): Set<string> {
  const types = new Set<string>();
  const type = schema.type;
  if (typeof type === "string") types.add(type);
  if (Array.isArray(type)) for (const item of type) if (typeof item === "string") types.add(item);
  for (const key of ["anyOf", "oneOf"]) {
    const options = schema[key];
    if (Array.isArray(options))
      for (const option of options)
        if (isSchema(option)) for (const t of typesOf(option)) types.add(t);
  }
  return types;
}

function numberFor(name: string, schema: Schema): number {
  const min = typeof schema.minimum === "number" ? schema.minimum : undefined;
  const max = typeof schema.maximum === "number" ? schema.maximum : undefined;
  const wanted = /timeout/i.test(name) ? TIMEOUT_MS : (min ?? 1);
  return Math.min(max ?? wanted, Math.max(min ?? wanted, wanted));
}

/** A sensible value for a required parameter the script has no use for. */
function fillerFor(name: string, schema: Schema): unknown {
  if ("default" in schema) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const types = typesOf(schema);
  if (types.has("string")) return /dir|cwd|path/i.test(name) ? "." : DESCRIPTION;
  if (types.has("boolean")) return false;
  if (types.has("integer") || types.has("number")) return numberFor(name, schema);
  if (types.has("array")) return [];
  if (types.has("object")) return {};
  return DESCRIPTION;
}

/** How the script goes into the call: the `command` or `cmd` property, as a string or an argv. */
function commandSlot(properties: Schema): { key: string; form: "string" | "argv" } | undefined {
  const command = properties.command;
  if (isSchema(command)) {
    const types = typesOf(command);
    if (types.has("string")) return { key: "command", form: "string" };
    if (types.has("array")) return { key: "command", form: "argv" };
  }
  const cmd = properties.cmd;
  if (isSchema(cmd) && typesOf(cmd).has("string")) return { key: "cmd", form: "string" };
  return undefined;
}

function shellToolOf(tool: OfferedTool): ShellTool | undefined {
  const name = tool.function.name;
  if (!SHELL_NAME.test(name)) return undefined;
  const parameters = tool.function.parameters ?? {};
  const properties = isSchema(parameters.properties) ? parameters.properties : {};
  const slot = commandSlot(properties);
  if (!slot) return undefined;
  const required = Array.isArray(parameters.required)
    ? parameters.required.filter((key): key is string => typeof key === "string")
    : [];
  return {
    name,
    argumentsFor(script) {
      const args: Record<string, unknown> = {
        [slot.key]: slot.form === "argv" ? ["bash", "-lc", script] : script,
      };
      for (const key of required) {
        if (key === slot.key) continue;
        const schema = properties[key];
        args[key] = fillerFor(key, isSchema(schema) ? schema : {});
      }
      return args;
    },
  };
}

/** The first tool in `tools` that is a shell the simulator can call, or undefined. */
export function findShellTool(tools: readonly OfferedTool[]): ShellTool | undefined {
  for (const tool of tools) {
    const shell = shellToolOf(tool);
    if (shell) return shell;
  }
  return undefined;
}
