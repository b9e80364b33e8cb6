/** @module Writing a finished rollout's record to R2 and sending its result message, from its session. */
import { publishRollout } from "../../../sink/publication/publish-rollout";
import { buildRolloutView, type SessionKernel } from "../kernel";

/**
 * Writes the record to R2 and sends the result message (every write idempotent, so it may repeat):
 * the first publication (`result-publication.ts`) and every re-send (`result-delivery.ts`).
 */
export async function publishResult(kernel: SessionKernel): Promise<void> {
  const spec = kernel.spec!;
  const state = kernel.state!;
  const store = kernel.store;
  const view = buildRolloutView(spec, state, {
    steps: store.listSteps().map((stored) => stored.step),
    calls: store.listCalls(),
    spans: store.listSpans(),
    finalMessages: store.readFinalMessages(),
  });
  await publishRollout(kernel.deps.sink!, view, spec.group);
}
