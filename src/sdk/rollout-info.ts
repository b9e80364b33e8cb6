/** @module What every attempt-style agent is told about its rollout, and where it may write files. */
import type { RolloutConfig } from "../schemas/rollout-config";

/** One attempt of a rollout (Agent-lightning's Attempt): numbered from 1. */
export interface AttemptInfo {
  /** `<rollout id>/attempt/<sequence_id>`. */
  attempt_id: string;
  sequence_id: number;
  /** The rollout's `max_attempts`. */
  max_attempts: number;
}

/** The rollout an attempt belongs to (Agent-lightning's AttemptedRollout). */
export interface RolloutInfo {
  rollout_id: string;
  /** `train` or `val` (the rollout config's `mode`). */
  mode: "train" | "val";
  attempt: AttemptInfo;
  config: RolloutConfig;
  /** Aborts when the attempt is given up (deadline, unresponsiveness, cancel); pass it to anything slow. */
  signal: AbortSignal;
  /** Which version of each declared resource this attempt got: `name@version`, or `default`. */
  resource_versions: Record<string, string>;
}

/**
 * Files of one rollout, in R2 (binding `TRAJECTORIES`) under `rollouts/<id>/artifacts/`: the
 * stand-in for a per-rollout working directory. Paths are relative (`out/answer.txt`).
 */
export interface Artifacts {
  /** The key prefix every path is written under. */
  readonly prefix: string;
  /** Writes a file and returns its full key. */
  write(
    path: string,
    body: string | ArrayBuffer | Uint8Array,
    options?: { contentType?: string },
  ): Promise<string>;
  /** A file's bytes, or null when it does not exist. */
  read(path: string): Promise<ArrayBuffer | null>;
  /** A file as UTF-8 text, or null. */
  readText(path: string): Promise<string | null>;
}
