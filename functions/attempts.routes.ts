/** @module `/v1/rollouts/:id/attempts/:attempt`: a runner ends the attempt it holds (finish, release). */
import { objects } from "../src/runtime/objects";
import { Hono } from "hono";
import { ConflictError, InvalidInputError, NotFoundError } from "../src/errors";
import type { AttemptEndResult } from "../src/runtime/session";
import { FinishRolloutRequest, RolloutId } from "../src/schemas/rollout-api";
import { ReleaseAttemptRequest, RunnerId } from "../src/schemas/runner-claims";
import type { AppEnv } from "./env";
import { parseJsonBody } from "./middleware/problem-details";

/** `POST …/finish`: the outcome an external rollout's finish takes, plus the runner holding the attempt. */
export const FinishAttemptRequest = FinishRolloutRequest.extend({ runner_id: RunnerId });

/** The rollout id and attempt number of the path, or 400/404. */
function attemptParams(id: string, rawAttempt: string): { rolloutId: string; attempt: number } {
  const parsed = RolloutId.safeParse(id);
  if (!parsed.success)
    throw new InvalidInputError(`rollout_id: ${parsed.error.issues[0]?.message}`, {
      status: 400,
      details: [{ path: "rollout_id", message: parsed.error.issues[0]?.message ?? "invalid" }],
    });
  const attempt = Number(rawAttempt);
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new InvalidInputError("attempt must be an integer >= 1", {
      status: 400,
      details: [{ path: "attempt", message: "must be an integer >= 1" }],
    });
  return { rolloutId: parsed.data, attempt };
}

/** Answers an attempt outcome, or the HTTP error for a refused one (409 when the runner no longer holds it). */
function attemptAnswer(
  rolloutId: string,
  attempt: number,
  result: AttemptEndResult,
): { rollout_id: string; attempt: number; status: string; termination_reason: string | null } {
  if (!result.ok) {
    if (result.reason === "not_found")
      throw new NotFoundError(`rollout ${rolloutId} does not exist`);
    throw new ConflictError(result.message);
  }
  return {
    rollout_id: rolloutId,
    attempt,
    status: result.status,
    termination_reason: result.termination_reason,
  };
}

/** Routes mounted at `/v1/rollouts/:id/attempts/:attempt`. */
export function attemptsRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();

  routes.post("/finish", async (c) => {
    const { rolloutId, attempt } = attemptParams(c.req.param("id")!, c.req.param("attempt")!);
    const { runner_id, ...outcome } = await parseJsonBody(c, FinishAttemptRequest);
    const result = await objects(c.env)
      .session(rolloutId)
      .finishAttempt(attempt, runner_id, outcome);
    return c.json(attemptAnswer(rolloutId, attempt, result));
  });

  routes.post("/release", async (c) => {
    const { rolloutId, attempt } = attemptParams(c.req.param("id")!, c.req.param("attempt")!);
    const body = await parseJsonBody(c, ReleaseAttemptRequest);
    const result = await objects(c.env)
      .session(rolloutId)
      .releaseAttempt(attempt, body.runner_id, body.reason, body.error);
    return c.json(attemptAnswer(rolloutId, attempt, result));
  });

  return routes;
}
