/**
 * @module `POST /update_weights_from_disk`: new weights from a file the trainer wrote, modelled on
 * SGLang's endpoint of that name (python/sglang/srt/entrypoints/http_server.py): `model_path` and
 * a `weight_version`, answered `{success, message, num_paused_requests}`. vLLM has no such route
 * (its weight reload is an RPC a trainer reaches inside its own process), so a trainer driving a
 * simulator with a real policy behind it uses this one, between `POST /v1/policy/sync/begin` and
 * `end`. The load waits for the engine's step under way and holds the next until it lands, so no
 * token comes from half-loaded weights; a refused file leaves the old weights serving and the
 * version unchanged.
 */
import type { ServerResponse } from "node:http";
import { z } from "zod";
import type { EngineLoop } from "./engine/engine-loop";
import type { TokenSource } from "./engine/token-source";
import { sendJson } from "./http-io";

/** The request body; SGLang sends `weight_version` as a string, so a numeric string is taken too. */
export const UpdateWeightsRequest = z.looseObject({
  model_path: z.string().min(1, "model_path must name the checkpoint"),
  weight_version: z.union([
    z.int().min(0, "weight_version must be >= 0"),
    z
      .string()
      .regex(/^\d+$/, "weight_version must be a whole number")
      .transform((text) => Number(text)),
  ]),
});

/** Loads new weights into the token source between two engine steps; `setVersion` records the version on success. */
export async function handleUpdateWeights(
  body: unknown,
  res: ServerResponse,
  deps: { source: TokenSource; engine: EngineLoop; setVersion(version: number): void },
): Promise<void> {
  const parsed = UpdateWeightsRequest.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return sendJson(res, 400, {
      success: false,
      message: `${issue.path.join(".") || "body"}: ${issue.message}`,
    });
  }
  const { source } = deps;
  if (!source.loadWeights)
    return sendJson(res, 400, {
      success: false,
      message: `the ${source.name} token source has no weights to load; PUT /sim/config {"policyVersion": n} versions its log-probs`,
    });
  const { model_path: path, weight_version: version } = parsed.data;
  try {
    const { paused } = await deps.engine.betweenSteps(() => source.loadWeights!(path, version));
    deps.setVersion(version);
    sendJson(res, 200, {
      success: true,
      message: `Succeeded to update model weights (weight_version ${version}).`,
      num_paused_requests: paused,
      weight_version: version,
    });
  } catch (error) {
    sendJson(res, 400, {
      success: false,
      message: `Failed to update weights: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
}
