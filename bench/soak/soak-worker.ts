/**
 * @module The Worker the soak runs: the real one plus the soak's attempt-style agents, with one
 * injected faults of its own: a share of queue batches (`SOAK_DUPLICATE_RATE`) is delivered twice
 * at once, to two consumers running concurrently, as an at-least-once queue with parallel
 * consumers may; and a share of the soak agents' environments fail (`SOAK_ENV_FAULT_RATE`,
 * soak-faults.ts). `GET /soak/stats` tells how many of each this incarnation of the Worker made.
 */
import "./soak-agents";
import { envFaultsInjected, setEnvFaultRate } from "./soak-faults";
import type { AppEnv } from "../../functions/env";
import worker from "../../functions/worker";

export * from "../../functions/worker";

/** The Worker's bindings plus the soak's own knob. */
type SoakEnv = AppEnv & { SOAK_DUPLICATE_RATE?: string; SOAK_ENV_FAULT_RATE?: string };

let duplicated = 0;

export default {
  async fetch(request: Request, env: SoakEnv, ctx: ExecutionContext) {
    setEnvFaultRate(Number(env.SOAK_ENV_FAULT_RATE ?? 0));
    if (new URL(request.url).pathname === "/soak/stats")
      return Response.json({
        duplicated_deliveries: duplicated,
        env_faults: envFaultsInjected(),
      });
    return worker.fetch(request, env, ctx);
  },
  async queue(batch: MessageBatch<unknown>, env: SoakEnv) {
    setEnvFaultRate(Number(env.SOAK_ENV_FAULT_RATE ?? 0));
    if (Math.random() >= Number(env.SOAK_DUPLICATE_RATE ?? 0)) return worker.queue(batch, env);
    duplicated += batch.messages.length;
    // The same messages to two consumers at once: acks and retries of either are no-ops for the
    // local queue, so each consumer's effects (ingests, hand-offs) must be idempotent by themselves.
    await Promise.all([worker.queue(batch, env), worker.queue(batch, env)]);
  },
} satisfies ExportedHandler<SoakEnv>;
