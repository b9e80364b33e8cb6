/** @module `edge-rollout show ROLLOUT`: a trajectory in the terminal with its training mask. */
import { RolloutView } from "../../../src/schemas/rollout-api";
import { buildSamplesForView } from "../../../src/training/sample-builder";
import type { ApiClient } from "../api-client";
import { OperationError } from "../errors";
import { groupOf } from "../../../src/schemas/batch-rollout-id";
import type { Output } from "../output";
import { formatRollout, type RenderOptions } from "../render-rollout";

/** `GET /v1/rollouts/:id`, validated (defaults applied) so the sink's code can run on it. */
export async function readRollout(client: ApiClient, rolloutId: string): Promise<RolloutView> {
  const raw = await client.get<unknown>(`/v1/rollouts/${encodeURIComponent(rolloutId)}`);
  const parsed = RolloutView.safeParse(raw);
  if (!parsed.success)
    throw new OperationError(`the server's view of ${rolloutId} does not match this CLI's schema`, {
      details: parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })),
    });
  return parsed.data;
}

/**
 * Prints the rollout. The training samples are computed here from the view's LLM calls with the
 * sink's own sample builder (same mode, same predicate), because the published R2 record has no
 * HTTP route; for a published rollout they equal the record's samples.
 */
export async function runShow(
  rolloutId: string,
  options: RenderOptions,
  client: ApiClient,
  out: Output,
): Promise<0> {
  const view = await readRollout(client, rolloutId);
  const group = groupOf(view.rollout_id);
  const built = buildSamplesForView(view, group);
  const data = {
    rollout: view,
    samples: built.samples,
    drift_splits: built.drift_splits,
    samples_source: "computed from llm_calls by src/training/sample-builder.ts",
  };
  out.result(data, () => formatRollout(view, built.samples, built.drift_splits, options));
  return 0;
}
