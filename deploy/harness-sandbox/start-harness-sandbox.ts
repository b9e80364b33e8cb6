/**
 * @module How a rollout starts its sandbox. An `external:<harness>` rollout is offered on the claim queue
 * like any external rollout; `HarnessLauncher` (one object, named "launcher") is the runner that
 * claims it, with the runner API's own claim and lease, and hands each claimed attempt to a fresh
 * `HarnessSandbox` object named `<rollout_id>:<attempt>`, which starts that attempt's container:
 *
 *   rollout created → offer (ClaimQueue) → launcher alarm: POST /v1/runners/claim
 *     → HARNESS_SANDBOX.getByName("<rollout_id>:<attempt>").begin(claim) → container.start(...)
 *
 * The launcher keeps at most MAX_SANDBOXES attempts running (a slot frees when a sandbox calls
 * `ended`), so it never claims work no container could run. Claims poll every POLL_MS while there is
 * room; each claim visits the agent's claim shards, which an empty poll does in one request.
 */
import { DurableObject } from "cloudflare:workers";
import { claim, endAttempt } from "./edge-rollout-api";
import { sandboxName } from "./harness-sandbox";
import { harnessSettings, type HarnessEnv } from "./harness-env";

/** The runner id on every lease the sandboxes hold (shown per batch, like a Python runner's). */
export const LAUNCHER_RUNNER_ID = "harness-sandbox-launcher";
/** Pause between claims while there is room (a Python runner's idle poll backs off to 1 s the same way). */
const POLL_MS = 1_000;
/** A slot whose sandbox never said `ended` is freed after this (the sandbox's own deadline, plus margin). */
const SLOT_TTL_MS = 50 * 60_000;

/** Claims `external:<harness>` attempts and starts one sandbox per attempt (see the module doc). */
export class HarnessLauncher extends DurableObject<HarnessEnv> {
  /** Makes sure the claim loop runs (the cron trigger and `POST /launch` call this). */
  async wake(): Promise<void> {
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now());
  }

  /** A sandbox finished (reported, released or gave up): its slot is free. */
  async ended(name: string): Promise<void> {
    await this.ctx.storage.delete(`slot:${name}`);
  }

  override async alarm(): Promise<void> {
    const settings = harnessSettings(this.env);
    const room = settings.maxSandboxes - (await this.#running());
    if (room > 0) {
      const claimed = await claim(
        this.env,
        LAUNCHER_RUNNER_ID,
        settings.agents,
        room,
        settings.leaseMs,
      );
      for (const attempt of claimed) {
        const name = sandboxName(attempt);
        await this.ctx.storage.put(`slot:${name}`, Date.now());
        try {
          // The sandbox renews the lease from here on; begin() returns once its container is starting.
          await this.env.HARNESS_SANDBOX.getByName(name).begin(attempt);
        } catch (error) {
          // No container (max_instances reached, a bad image): offered again, no attempt used up.
          console.error("sandbox did not start", { name, error: String(error) });
          await this.ctx.storage.delete(`slot:${name}`);
          const lease = {
            rollout_id: attempt.rollout_id,
            attempt: attempt.attempt,
            runner_id: attempt.runner_id,
          };
          await endAttempt(this.env, lease, "release", {
            reason: "shutdown",
            error: String(error),
          });
        }
      }
    }
    await this.ctx.storage.setAlarm(Date.now() + POLL_MS);
  }

  /** Slots held now; slots older than SLOT_TTL_MS are dropped (their sandbox is past its own deadline). */
  async #running(): Promise<number> {
    const slots = await this.ctx.storage.list<number>({ prefix: "slot:" });
    const stale = [...slots]
      .filter(([, since]) => Date.now() - since > SLOT_TTL_MS)
      .map(([key]) => key);
    if (stale.length > 0) await this.ctx.storage.delete(stale);
    return slots.size - stale.length;
  }
}
