/** @module The stateless driver: lease a rollout, hand it to its agent's engine. */
import { createEngine } from "../engines/agent-engine";
import type { EngineStream } from "../engines/engine-types";
import type { SessionHandle } from "../session";
import type { JsonObject } from "../../schemas/json";
import type { DriverDeps, DriveOutcome } from "../engines/driver-deps";
import { runWithRolloutConsole } from "./rollout-console";

export type { DriverDeps, DriveOutcome, InWorkerDeps } from "../engines/driver-deps";

/**
 * Advances one rollout as far as this invocation may. The lease makes this driver the only one;
 * the agent's engine does the rest: the stepwise engine steps and commits until the rollout ends,
 * its time slice runs out (handoff) or its lease is taken away; attempt engines run the agent's
 * code as numbered attempts until one succeeds or none is left.
 */
export async function driveRollout(
  deps: DriverDeps,
  rolloutId: string,
  stream?: EngineStream,
): Promise<DriveOutcome> {
  const session = deps.sessions.get(rolloutId);
  const leased = await session.lease(deps.driverId);
  if (!leased.ok) return { result: "skipped", reason: leased.reason };
  const { lease, resume } = leased;
  const definition = deps.resolveAgent(resume.spec.agent);
  if (!definition)
    return failBeforeStart(
      session,
      lease.lease_id,
      `agent "${resume.spec.agent}" is not registered in this deployment`,
    );
  const engine = createEngine(definition, { deps, session, lease, resume });
  if (!engine)
    return failBeforeStart(
      session,
      lease.lease_id,
      `agent "${resume.spec.agent}" names engine "${definition.kind === "stepwise" ? definition.engine : definition.kind}", which is not registered in this deployment (registerEngine)`,
    );
  // The agent's console output is prefixed with the rollout id (see rollout-console.ts).
  return runWithRolloutConsole(rolloutId, () =>
    engine.generateTrajectory(resume.spec.task, stream ?? sessionStream(session)),
  );
}

/**
 * Ends a leased rollout whose agent cannot run here (a deployment without its agent or engine) as
 * an `AGENT_ERROR` before any step: retrying on another invocation of the same deployment would
 * fail the same way. A lease lost meanwhile is reported, not overridden.
 */
async function failBeforeStart(
  session: Pick<SessionHandle, "finish">,
  leaseId: string,
  error: string,
): Promise<DriveOutcome> {
  const ended = await session.finish(leaseId, {
    termination_reason: "AGENT_ERROR",
    reward: null,
    error,
  });
  if (!ended.ok) return { result: "lost_lease", steps: 0, reason: ended.reason };
  return {
    result: "finished",
    steps: 0,
    termination_reason: ended.termination_reason ?? "AGENT_ERROR",
  };
}

/**
 * The stream an engine reports to in production: attempt events become `attempt` annotation spans
 * of the rollout, which the session also sends on its SSE stream. Steps need nothing here: a
 * committed step is already on the stream. A span that cannot be written (the rollout just ended)
 * is dropped; the rollout's record is its session, not this stream.
 */
export function sessionStream(session: Pick<SessionHandle, "addEvents">): EngineStream {
  return async (event) => {
    if (event.type === "step") return;
    const value: JsonObject =
      event.type === "attempt_started"
        ? { attempt: event.attempt, phase: "started" }
        : { attempt: event.attempt, phase: "ended", outcome: event.outcome, error: event.error };
    await session
      .addEvents([
        { kind: "annotation", name: "attempt", value, attributes: { attempt: event.attempt } },
      ])
      .catch(() => undefined);
  };
}
