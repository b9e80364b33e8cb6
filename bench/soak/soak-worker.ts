/**
 * @module The Worker the soak runs: the real one plus the soak's attempt-style agents, with one
 * injected fault of its own: a share of queue batches (`SOAK_DUPLICATE_RATE`) is handled twice,
 * as an at-least-once queue may deliver them. `GET /soak/stats` tells how many were duplicated
 * by this incarnation of the Worker.
 */
import "./soak-agents";
import type { AppEnv } from "../../functions/env";
import worker from "../../functions/worker";

export * from "../../functions/worker";

/** The Worker's bindings plus the soak's own knob. */
type SoakEnv = AppEnv & { SOAK_DUPLICATE_RATE?: string };

let duplicated = 0;

export default {
  async fetch(request: Request, env: SoakEnv, ctx: ExecutionContext) {
    if (new URL(request.url).pathname === "/soak/stats")
      return Response.json({ duplicated_deliveries: duplicated });
    return worker.fetch(request, env, ctx);
  },
  async queue(batch: MessageBatch<unknown>, env: SoakEnv) {
    await worker.queue(batch, env);
    if (Math.random() < Number(env.SOAK_DUPLICATE_RATE ?? 0)) {
      duplicated += batch.messages.length;
      // The same messages again: acks and retries of the second delivery are no-ops for the queue.
      await worker.queue(batch, env);
    }
  },
} satisfies ExportedHandler<SoakEnv>;
