/**
 * @module An online session as a rollout: an external rollout (the application drives it through
 * its calls) whose spec carries its application, session id and the serving version it was
 * assigned, and whose group is its placement. Its own watchdog is only a backstop: the
 * application's object closes it when its feedback window ends.
 */
import type { AppId, AppSettings, ServingVersion } from "../schemas/online";
import { RolloutConfig } from "../schemas/rollout-config";
import type { RolloutSpec } from "../schemas/rollout-api";
import { AgentTask } from "../schemas/agent-task";
import type { OnlinePlacement } from "./online-ids";
import { onlineRolloutId } from "./online-ids";

/** How long past its window a session's own watchdog waits for its application's object to close it. */
const BACKSTOP_MS = 10 * 60_000;

/** What an online session is made from. */
export interface OnlineSessionInput {
  appId: AppId;
  sessionId: string;
  promptKey: string | null;
  version: number;
  serving: ServingVersion;
  placement: OnlinePlacement;
  settings: AppSettings;
  createdAt: number;
}

/** The rollout spec of an online session (the same input gives the same spec: creating it again is a no-op). */
export function onlineSessionSpec(input: OnlineSessionInput): RolloutSpec {
  const lifetime = input.settings.feedback_window_ms + BACKSTOP_MS;
  return {
    rollout_id: onlineRolloutId(input.appId, input.sessionId),
    kind: "external",
    agent: "external",
    task: AgentTask.parse({
      problem: "",
      task_id: input.sessionId,
      prompt_id: input.promptKey ?? "",
      agent_name: `online:${input.appId}`,
    }),
    // A conversation's calls are idle between a user's turns: the idle and whole-session bounds
    // are the window (plus the backstop), and its response budget is a long chat's.
    config: RolloutConfig.parse({
      step_timeout_ms: lifetime,
      rollout_timeout_ms: lifetime,
      max_response_length: 1_000_000,
    }),
    group: {
      uid: input.placement.uid,
      sample_index: input.placement.sample_index,
      group_size: input.placement.group_size,
      batch_id: null,
      training_mode: input.settings.training_mode,
      data_manager: "train",
      attempt: 0,
      max_member_retries: 0,
      signal_filter: null,
      // A prompt key's group keeps its scored sessions when one was withheld.
      on_infra_failure: "deliver_valid",
    },
    created_at: input.createdAt,
    runner: null,
    tree: null,
    online: {
      app_id: input.appId,
      session_id: input.sessionId,
      version: input.version,
      prompt_key: input.promptKey,
      serving: input.serving,
    },
  };
}
