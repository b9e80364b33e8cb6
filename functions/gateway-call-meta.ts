/** @module What a gateway call says about itself: its id, its attempt (path or header) and its purpose. */
import type { Context } from "hono";
import { InvalidInputError, NotFoundError } from "../src/errors";
import type { GatewayCallMeta } from "../src/runtime/session";
import {
  ATTEMPT_HEADER,
  CALL_ID_HEADER,
  CallPurpose,
  ClientCallId,
  PURPOSE_HEADER,
} from "../src/schemas/llm-call";
import type { AppEnv } from "./env";

type GatewayContext = Context<{ Bindings: AppEnv }>;

/** The runner attempt in the path (`/v1/rollouts/:id/attempts/:attempt/llm/v1`), if the call came that way. */
function pathAttemptOf(c: GatewayContext): number | undefined {
  const raw = c.req.param("attempt");
  if (raw === undefined) return undefined;
  const attempt = Number(raw);
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new NotFoundError(`no attempt ${raw} of this rollout`);
  return attempt;
}

/** The attempt a call belongs to: the path's, else what an in-Worker attempt's fetch declares in its header; null when neither. */
function attemptOf(c: GatewayContext): number | null {
  const fromPath = pathAttemptOf(c);
  if (fromPath !== undefined) return fromPath;
  const raw = c.req.header(ATTEMPT_HEADER);
  if (raw === undefined) return null;
  const attempt = Number(raw);
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new InvalidInputError(`${ATTEMPT_HEADER} must be an attempt number >= 1`, {
      status: 400,
    });
  return attempt;
}

/** What the call is for: `judge` when a grader's llm says so in its header, else `policy`. */
function purposeOf(c: GatewayContext): CallPurpose {
  const raw = c.req.header(PURPOSE_HEADER);
  if (raw === undefined) return "policy";
  const purpose = CallPurpose.safeParse(raw);
  if (!purpose.success)
    throw new InvalidInputError(
      `${PURPOSE_HEADER} must be one of ${CallPurpose.options.join(", ")}`,
      { status: 400 },
    );
  return purpose.data;
}

/**
 * The call's id: the client's own (`CALL_ID_HEADER`, given back as the gateway answered it or
 * bare) under the rollout's prefix, else a new one.
 */
function callIdOf(c: GatewayContext, rolloutId: string): { callId: string; named: boolean } {
  const prefix = `${rolloutId}/gw/`;
  const raw = c.req.header(CALL_ID_HEADER);
  if (raw === undefined) return { callId: `${prefix}${crypto.randomUUID()}`, named: false };
  const own = ClientCallId.safeParse(raw.startsWith(prefix) ? raw.slice(prefix.length) : raw);
  if (!own.success)
    throw new InvalidInputError(`${CALL_ID_HEADER} ${own.error.issues[0]?.message}`, {
      status: 400,
    });
  return { callId: `${prefix}${own.data}`, named: true };
}

/** A new call of `rolloutId` as the request describes it (its key already checked). */
export function callMetaOf(
  c: GatewayContext,
  rolloutId: string,
): GatewayCallMeta & { rolloutId: string } {
  const pathAttempt = pathAttemptOf(c);
  const { callId, named } = callIdOf(c, rolloutId);
  return {
    rolloutId,
    callId,
    ...(named ? { clientCallId: true } : {}),
    attempt: attemptOf(c),
    purpose: purposeOf(c),
    ...(pathAttempt === undefined ? {} : { pathAttempt }),
  };
}
