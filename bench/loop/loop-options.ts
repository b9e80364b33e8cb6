/** @module bench:loop's command line: its flags, checked (a bad value exits 2 with the reason). */
import { commandLine } from "../../scripts/command-line";
import { dataManagers } from "../../src/training/training-modes";
import type { StackKind } from "../kit/bench-stack";
import { BENCH_GROUP_SIZE } from "../kit/loop-ours";

/** Parses and checks bench:loop's flags. */
export function loopOptions() {
  const values = commandLine({
    usage: "npm run bench:loop -- [options]",
    description:
      "N rollouts × steps through edge-rollout on the local stack vs a bare openai-client loop, against one simulator.",
    flags: {
      rollouts: { type: "string", default: "30", help: "rollouts (each a dialogue)" },
      steps: { type: "string", default: "5", help: "steps (model calls) per rollout" },
      "ttft-ms": { type: "string", default: "50", help: "simulator time to first token" },
      "per-token-ms": { type: "string", default: "1", help: "simulator time per generated token" },
      "max-tokens": { type: "string", default: "24", help: "max_tokens per call" },
      stack: {
        type: "string",
        default: "miniflare",
        help: "miniflare, wrangler, or both (side by side in this run)",
      },
      "profile-rollouts": {
        type: "string",
        default: "16",
        help: "rollouts in the profiled (untimed) run; 0 = none",
      },
      rounds: {
        type: "string",
        default: "1",
        help: "alternating rounds of ours, the bare loop and the floor; each figure is the median over them",
      },
      "warm-up-rounds": {
        type: "string",
        default: "1",
        help: "untimed full-size rounds of each (ours, the bare loop, the floor) before the timed ones, so the JIT has compiled the hot paths",
      },
      "skip-floor": {
        type: "boolean",
        default: false,
        help: "skip the workerd floor (the same calls from a bare Worker in workerd, with and without object round trips)",
      },
      port: { type: "string", default: "8797", help: "Worker port" },
      "fit-steps": {
        type: "string",
        default: "",
        help: "e.g. 2,10: after the run, ours and the floor with publication at each of these steps per rollout (--rounds each), split into CPU per rollout and per step",
      },
      "data-manager": {
        type: "string",
        default: "",
        help: "empty (default): rollouts created alone; a data manager (train, infer): rollouts in groups of 8 of it, published as a training run's (train: sample tables, result messages into the feed, delivery checks)",
      },
      "interruptible-calls": {
        type: "string",
        default: "off",
        help: "on: the driver's plain calls stream from upstream so an interrupt sync can cut them (DRIVER_INTERRUPTIBLE_CALLS=on); off (default): non-streamed",
      },
    },
  });
  const rollouts = Number(values.rollouts);
  const steps = Number(values.steps);
  const maxTokens = Number(values["max-tokens"]);
  const profileRollouts = Number(values["profile-rollouts"]);
  const rounds = Number(values.rounds);
  const kinds: StackKind[] =
    values.stack === "both" ? ["wrangler", "miniflare"] : [values.stack as StackKind];
  if (!kinds.every((k) => k === "miniflare" || k === "wrangler")) {
    console.error(`bench:loop: --stack must be miniflare, wrangler or both, got "${values.stack}"`);
    process.exit(2);
  }
  const warmUpRounds = Number(values["warm-up-rounds"]);
  if (!Number.isInteger(warmUpRounds) || warmUpRounds < 0 || warmUpRounds > 5) {
    console.error(
      `bench:loop: --warm-up-rounds must be an integer 0..5, got "${values["warm-up-rounds"]}"`,
    );
    process.exit(2);
  }
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) {
    console.error(`bench:loop: --rounds must be an integer 1..20, got "${values.rounds}"`);
    process.exit(2);
  }
  const fitSteps = values["fit-steps"] === "" ? [] : values["fit-steps"].split(",").map(Number);
  if (
    fitSteps.some((n) => !Number.isInteger(n) || n < 1 || n > 50) ||
    new Set(fitSteps).size === 1
  ) {
    console.error(
      `bench:loop: --fit-steps takes two or more different step counts 1..50, e.g. 2,10; got "${values["fit-steps"]}"`,
    );
    process.exit(2);
  }
  const dataManager = values["data-manager"];
  if (dataManager !== "" && !dataManagers.get(dataManager)) {
    console.error(
      `bench:loop: --data-manager must be empty or a registered data manager (${dataManagers.names().join(", ")}), got "${dataManager}"`,
    );
    process.exit(2);
  }
  if (dataManager !== "" && rollouts % BENCH_GROUP_SIZE !== 0) {
    console.error(
      `bench:loop: with --data-manager, --rollouts must be a multiple of ${BENCH_GROUP_SIZE} (whole groups), got ${rollouts}`,
    );
    process.exit(2);
  }
  return {
    values,
    dataManager,
    rollouts,
    steps,
    maxTokens,
    profileRollouts,
    rounds,
    warmUpRounds,
    kinds,
    fitSteps,
  };
}
