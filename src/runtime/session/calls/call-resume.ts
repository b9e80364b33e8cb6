/**
 * @module What a restarted session does with the calls its restart cut (the flights it finds
 * that this object life does not run): each runs on and ends recorded once, from the token ids it
 * kept when it can resume token-exactly (as after an `interrupt` weight sync), else whole, and its
 * answer is held for the caller that comes back for it (reattach.ts).
 */
import { notInterruptibleBecause } from "../../../gateway/interruptible";
import type { ProgressCadence } from "../../../gateway/stream-progress";
import type { CallFlights, KeptFlight } from "./call-flights";
import type { Resumption } from "./gateway-call-owner";
import type { ReattachableCalls } from "./reattach";
import type { GatewayCallResult } from "./gateway-call";

/** The text a retry without a call id must match exactly: the request's path and body. */
export function requestKey(path: string, body: unknown): string {
  return `${path}\n${JSON.stringify(body)}`;
}

/** What resuming needs from the session object. */
export interface ResumeDeps {
  flights: CallFlights;
  /** The calls this object life runs itself. */
  running: ReadonlySet<string>;
  /** Whether `callId` is already recorded (a crash between its record and its flight's end). */
  recorded(callId: string): boolean;
  /** Runs a cut call again (the owner's `ownGatewayCall` with a resumption). */
  run(flight: KeptFlight, resumption: Resumption): Promise<GatewayCallResult>;
  reattach: ReattachableCalls;
  keepAlive(work: Promise<unknown>): void;
  cadence: ProgressCadence;
}

/** How a cut call goes on: from its kept ids, or whole and why. */
export function resumptionOf(flight: KeptFlight, cadence: ProgressCadence): Resumption {
  const { path, body, meta } = flight.request;
  const why =
    notInterruptibleBecause(path, body) ??
    (meta.turns ? "a harness turn is answered as one reply" : null);
  const fromIds = why === null && flight.keptTokens > 0 && flight.runs !== null;
  const restarts = flight.restarts + 1;
  return {
    seed: fromIds
      ? { payloads: flight.payloads, runs: flight.runs!, interrupted: flight.interrupted }
      : null,
    note: {
      restarts,
      resumed: fromIds ? "token_ids" : "whole",
      kept_tokens: fromIds ? flight.keptTokens : 0,
      // Each restart regenerates at most what arrived after the last batch kept: under one cadence step.
      regenerated_tokens_max: fromIds ? cadence.tokens * restarts : null,
      reason: fromIds ? null : (why ?? "nothing was kept before the restart"),
    },
  };
}

/** Runs on every call the restart cut; returns how many. */
export function resumeCutCalls(deps: ResumeDeps): number {
  const cut = deps.flights.cut(deps.running);
  let resumed = 0;
  for (const flight of cut) {
    if (deps.recorded(flight.callId)) {
      deps.flights.end(flight.callId);
      continue;
    }
    const resumption = resumptionOf(flight, deps.cadence);
    deps.flights.restarted(flight.callId, resumption.seed !== null);
    const answer = deps.run(flight, resumption);
    const key = requestKey(flight.request.path, flight.request.body);
    deps.keepAlive(deps.reattach.hold(flight.callId, key, answer));
    resumed += 1;
  }
  return resumed;
}
