/** @module Picks agent log lines (`[rollout <id>] …`) out of the runtime's output (workerd's, or wrangler dev's). */

const AGENT_LINE = /^\[rollout [^\]]+\] /;

/**
 * Splits wrangler's output chunks into lines and hands `onAgentLine` those an agent logged while
 * driving a rollout (the Worker prefixes them, see src/runtime/driver/rollout-console.ts), so the
 * local stack can show agent logs without wrangler's request and binding noise. A line split
 * across chunks is held until its end arrives.
 */
export function agentLogLines(
  onAgentLine: (line: string) => void,
): (chunk: Buffer | string) => void {
  let pending = "";
  return (chunk) => {
    const lines = (pending + chunk.toString()).split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      const clean = line.replace(/\r$/, "");
      if (AGENT_LINE.test(clean)) onAgentLine(clean);
    }
  };
}
