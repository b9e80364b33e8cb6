/** @module What a driver calls on a rollout session (a Durable Object stub satisfies it). */
import type { CommitResult, FinishInput, FinishResult, LeaseResult, StepCommit } from "./session-results";

/** The driver's view of one rollout session. */
export interface SessionHandle {
  lease(driverId: string): Promise<LeaseResult>;
  commitStep(leaseId: string, commit: StepCommit): Promise<CommitResult>;
  finish(leaseId: string, input: FinishInput): Promise<FinishResult>;
  handoff(leaseId: string): Promise<FinishResult>;
}

/** Finds the session of a rollout by id. */
export interface SessionLocator {
  get(rolloutId: string): SessionHandle;
}
