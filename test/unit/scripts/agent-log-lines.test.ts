import { describe, expect, it } from "vitest";
import { agentLogLines } from "../../../scripts/agent-log-lines";

describe("agentLogLines", () => {
  it("passes on only the agents' [rollout <id>] lines of wrangler's output, joining lines split across chunks", () => {
    const seen: string[] = [];
    const feed = agentLogLines((line) => seen.push(line));
    feed(
      "[wrangler:info] Ready on http://127.0.0.1:8787\n[wrangler:info] POST /v1/rollouts 202 Accepted (89ms)\n[rollout r-1] thinking about",
    );
    expect(seen).toEqual([]);
    feed(
      " 6 * 7\r\n[wrangler:info] QUEUE edge-rollout-work 1/1 (443ms)\n[rollout b:0:1] {\n  a: 1\n}\n",
    );
    expect(seen).toEqual(["[rollout r-1] thinking about 6 * 7", "[rollout b:0:1] {"]);
  });
});
