/**
 * @module `HarnessSandbox`: the Durable Object that owns ONE rollout attempt's container, named
 * `<rollout_id>:<attempt>`. It holds the attempt's lease (heartbeats every third of it, from an
 * alarm), starts the container with the attempt's spec and no network but the egress entrypoint,
 * polls the container's `/outcome`, reports it through the runner API and destroys the container.
 * The container never talks to the edge-rollout API (clients/python/edge_rollout/harness/container_entry.py).
 *
 * Uses only the Durable Object Container API of the pinned runtime types (`start`, `getTcpPort`,
 * `interceptAllOutboundHttp`, `setInactivityTimeout`, `destroy`):
 * developers.cloudflare.com/containers/api/durable-object-container/.
 */
import { DurableObject } from "cloudflare:workers";
import type { ClaimedRollout } from "../../src/schemas/runner-claims";
import {
  addEvents,
  endAttempt,
  heartbeat,
  RunnerApiError,
  type HeldLease,
} from "./edge-rollout-api";
import { GATEWAY_HOST } from "./harness-egress";
import { harnessSettings, type HarnessEnv } from "./harness-env";

/** The control port of the entry (`HARNESS_CONTROL_PORT`, EXPOSE in the Dockerfile). */
const CONTROL_PORT = 8080;
/** Longest a sandbox may live: the tasks' agent timeout (600 s max here) + check + start, with margin. */
const SANDBOX_DEADLINE_MS = 45 * 60_000;
/** Longest from start() to the control server answering (image pull and boot; docs: cold starts "1-3 s"). */
const READY_DEADLINE_MS = 3 * 60_000;
/** The container stops by itself when this object has been idle this long (its alarms stopped). */
const INACTIVITY_TIMEOUT_MS = 5 * 60_000;

/** What one sandbox keeps in its storage. */
interface SandboxState {
  claim: ClaimedRollout;
  task: string;
  phase: "starting" | "running" | "done";
  startedAt: number;
  /** Kept once collected (the entry stops serving it then), so a failed report is retried from here. */
  outcome?: SandboxOutcome;
}

/** The outcome the entry serves on `GET /outcome` (container_entry.run_rollout). */
interface SandboxOutcome {
  finish: Record<string, unknown> | null;
  release: { reason: "crashed" | "shutdown"; error: string | null } | null;
  cancelled: boolean;
  spans: unknown[];
}

/** The task directory a claim names: `extra_args.task_dir`, else `problem` (as HarnessAgent's task_id_of). */
export function taskOf(claim: ClaimedRollout): string {
  const named = claim.task.extra_args["task_dir"];
  return typeof named === "string" && named ? named : claim.task.problem.trim();
}

/** The name of an attempt's sandbox object: one object, and so one container, per attempt. */
export function sandboxName(claim: Pick<ClaimedRollout, "rollout_id" | "attempt">): string {
  return `${claim.rollout_id}:${claim.attempt}`;
}

/** One attempt's sandbox (see the module doc). */
export class HarnessSandbox extends DurableObject<HarnessEnv> {
  /** Starts the sandbox of a claimed attempt; a second call for the same attempt does nothing. */
  async begin(claim: ClaimedRollout): Promise<void> {
    if (await this.ctx.storage.get<SandboxState>("state")) return;
    const state: SandboxState = {
      claim,
      task: taskOf(claim),
      phase: "starting",
      startedAt: Date.now(),
    };
    await this.ctx.storage.put("state", state);
    try {
      await this.#start(state);
    } catch (error) {
      // The launcher hands the attempt back; nothing of this sandbox may outlive that.
      if (this.#container().running) await this.#container().destroy("start failed");
      await this.ctx.storage.put("state", { ...state, phase: "done" });
      throw error;
    }
    await this.ctx.storage.setAlarm(Date.now() + 1_000);
  }

  /** The loop: collect the outcome, or notice a crash or the deadline, or renew the lease and wait. */
  override async alarm(): Promise<void> {
    const state = await this.ctx.storage.get<SandboxState>("state");
    if (!state || state.phase === "done") return;
    const settings = harnessSettings(this.env);
    const lease = this.#lease(state);
    const answer = state.outcome ? { reachable: true, outcome: state.outcome } : await this.#poll();
    if (answer.outcome) {
      await this.ctx.storage.put("state", { ...state, outcome: answer.outcome });
      return this.#report(state, lease, answer.outcome); // a throw retries the alarm, from storage
    }
    // "running" once the control server has answered: before that, running=false may only mean booting.
    const phase = answer.reachable ? "running" : state.phase;
    if (phase !== state.phase) await this.ctx.storage.put("state", { ...state, phase });
    const age = Date.now() - state.startedAt;
    const crashed =
      phase === "running" && !this.#container().running
        ? "the container exited without an outcome"
        : phase === "starting" && age > READY_DEADLINE_MS
          ? "the container did not start its control server"
          : age > SANDBOX_DEADLINE_MS
            ? "the sandbox ran past its deadline"
            : null;
    // A crash is released at once (the next attempt starts now); were this object unable to, the
    // lease would expire on its own and the attempt be offered again the same way.
    if (crashed) return this.#end(state, lease, { reason: "crashed", error: crashed });
    if (!(await heartbeat(this.env, lease, settings.leaseMs))) {
      await this.#cancel();
      return this.#end(state, lease, null); // the attempt is someone else's now: report nothing
    }
    await this.ctx.storage.setAlarm(Date.now() + settings.leaseMs / 3);
  }

  #container(): Container {
    const container = this.ctx.container;
    if (!container)
      throw new Error(
        "HarnessSandbox has no container: check [[containers]] in wrangler.containers.toml",
      );
    return container;
  }

  #lease(state: SandboxState): HeldLease {
    const { rollout_id, attempt, runner_id } = state.claim;
    return { rollout_id, attempt, runner_id };
  }

  async #start(state: SandboxState): Promise<void> {
    const { claim, task } = state;
    const container = this.#container();
    const egress = this.ctx.exports.HarnessEgress({
      props: {
        rolloutId: claim.rollout_id,
        attempt: claim.attempt,
        apiKey: claim.llm.api_key,
        task: harnessSettings(this.env).taskSource === "r2" ? task : null,
      },
    });
    // Installed before start() so the very first request is already covered.
    await container.interceptAllOutboundHttp(egress);
    const origin = `http://${GATEWAY_HOST}`;
    container.start({
      enableInternet: false,
      env: {
        HARNESS_ROLLOUT_ID: claim.rollout_id,
        HARNESS_ATTEMPT: String(claim.attempt),
        HARNESS_NAME: claim.agent,
        HARNESS_TASK: task,
        HARNESS_MODE: claim.mode,
        HARNESS_RUNNER_ID: claim.runner_id,
        HARNESS_LLM_BASE_URL: `${origin}/v1/rollouts/${claim.rollout_id}/attempts/${claim.attempt}/llm/v1`,
        ...(harnessSettings(this.env).taskSource === "r2"
          ? { HARNESS_TASK_ARCHIVE_URL: `${origin}/harness-tasks/${task}.tar.gz` }
          : {}),
      },
    });
    await container.setInactivityTimeout(INACTIVITY_TIMEOUT_MS);
  }

  /** `GET /outcome` on the control port: the outcome when done; `reachable` says whether the server answered. */
  async #poll(): Promise<{ reachable: boolean; outcome: SandboxOutcome | null }> {
    try {
      const port = this.#container().getTcpPort(CONTROL_PORT);
      const response = await port.fetch("http://container/outcome");
      if (response.status === 200) return { reachable: true, outcome: await response.json() };
      return { reachable: response.status === 202, outcome: null };
    } catch {
      return { reachable: false, outcome: null }; // not listening yet, or gone
    }
  }

  async #cancel(): Promise<void> {
    try {
      await this.#container()
        .getTcpPort(CONTROL_PORT)
        .fetch("http://container/cancel", { method: "POST" });
    } catch {
      // Already gone: destroy() below is what matters.
    }
  }

  async #report(state: SandboxState, lease: HeldLease, outcome: SandboxOutcome): Promise<void> {
    await addEvents(this.env, lease.rollout_id, outcome.spans);
    if (outcome.finish) {
      try {
        await endAttempt(this.env, lease, "finish", outcome.finish);
      } catch (error) {
        if (!(error instanceof RunnerApiError && error.status === 409)) throw error; // the alarm retries
        console.warn("finish refused: the lease was lost meanwhile", { ...lease });
      }
      return this.#end(state, lease, null);
    }
    // This object cancels only after losing the lease, and then never polls again: a cancelled
    // outcome means the platform stopped the container (SIGTERM: a rollout of a new image), so the
    // attempt goes back without being used up. Otherwise a runner failure (release: crashed).
    const stopped = { reason: "shutdown" as const, error: "the sandbox was stopped (SIGTERM)" };
    return this.#end(state, lease, outcome.cancelled ? stopped : outcome.release);
  }

  /** Releases the attempt when `release` is given, destroys the container, frees the launcher's slot. */
  async #end(
    state: SandboxState,
    lease: HeldLease,
    release: { reason: "crashed" | "shutdown"; error: string | null } | null,
  ): Promise<void> {
    if (release) {
      try {
        await endAttempt(this.env, lease, "release", release);
      } catch (error) {
        // 409: the lease was already lost; the attempt was re-offered anyway.
        console.warn("release refused", { ...lease, error: String(error) });
      }
    }
    if (this.#container().running) await this.#container().destroy("rollout attempt ended");
    await this.ctx.storage.put("state", { ...state, phase: "done" });
    await this.ctx.storage.deleteAlarm();
    await this.env.HARNESS_LAUNCHER.getByName("launcher").ended(sandboxName(state.claim));
  }
}
