/** @module Publishing a finished rollout: R2 record + ATIF document, then a pointer on ROLLOUT_RESULTS. */
import type { BlobStorePort, ResultsQueuePort } from "../../ports";
import type { RolloutView } from "../../schemas/rollout-api";
import type { z } from "zod";
import { RolloutGroup } from "../../schemas/rollout-group";
import { RESULT_MESSAGE_SCHEMA_VERSION, ResultMessage } from "../../schemas/result-message";
import { toAtif } from "../formats/atif";
import { generationCounts } from "./generation-counts";
import { memberSignal } from "../../training/member-signal";
import { rolloutAtifKey, rolloutRecordKey, rolloutSamplesKey } from "./r2-keys";
import { ROLLOUT_RECORD_SCHEMA_VERSION, type RolloutRecord } from "./rollout-record";
import { ARROW_STREAM_MEDIA_TYPE } from "../formats/arrow/arrow-format";
import { buildSamplesForView } from "../../training/sample-builder";
import { encodeSampleTable } from "../formats/sample-columns";
import { dataManagers } from "../../training/training-modes";

/** Where a finished rollout goes. */
export interface SinkDeps {
  blobs: BlobStorePort;
  results: ResultsQueuePort;
  now: () => number;
  /**
   * Asks whether the trainer feed holds this rollout's result (`uid`: its group, which picks the
   * feed shard) by sending a `delivery_check` message; the answer comes back later, from the
   * results consumer, to the session. Absent: delivery is not checked.
   */
  requestDeliveryCheck?: (rolloutId: string, uid: string) => Promise<void>;
}

/** The group of a rollout created alone: itself, stored but not fed to a trainer. */
export function soloGroup(rolloutId: string): RolloutGroup {
  return {
    uid: rolloutId,
    sample_index: 0,
    group_size: 1,
    batch_id: null,
    training_mode: "verl/hybrid",
    data_manager: "infer",
    attempt: 0,
    max_member_retries: 0,
    signal_filter: null,
    on_infra_failure: "withhold",
  };
}

/**
 * What reads a rollout's publication besides its record and ATIF document: a trainer pulls its
 * samples (`feeds_trainer`; an unknown manager counts as one, so the consumer still sees it and
 * retries, as it would a typo), and its batch's tracker counts its result message. A rollout of
 * neither (created alone, or an `infer` group outside a batch) is done once stored: a sample table
 * nobody pulls and a message read and acknowledged for nothing were an R2 write, three queue
 * operations and a consumer invocation's share per rollout.
 */
export function publicationReaders(placement: RolloutGroup): { trainer: boolean; batch: boolean } {
  return {
    trainer: dataManagers.get(placement.data_manager)?.feeds_trainer !== false,
    batch: placement.batch_id !== null,
  };
}

/**
 * Writes the record, the ATIF document and (when there are samples and a trainer will pull them)
 * the sample table, then announces them on the results queue when a trainer or a batch reads the
 * announcement (`publicationReaders`). Every write is idempotent (same keys, same content), so a
 * publish that failed halfway is simply run again; the announcement goes last, so a consumer
 * never sees a pointer to an object that is not there yet. Returns the result message, sent or not.
 */
export async function publishRollout(
  deps: SinkDeps,
  view: RolloutView,
  group: z.input<typeof RolloutGroup> | null,
): Promise<ResultMessage> {
  // Parsed: a group stored before a field existed gets its default.
  const placement = group ? RolloutGroup.parse(group) : soloGroup(view.rollout_id);
  const built = buildSamplesForView(view, placement);
  const readers = publicationReaders(placement);
  // The view was read from validated rows and the builder built each sample from them, typed;
  // parsing the whole record again cost several ms per rollout in workerd for nothing.
  const record: RolloutRecord = {
    schema_version: ROLLOUT_RECORD_SCHEMA_VERSION,
    rollout: view,
    samples: built.samples,
    sample_mode: view.config.sample_mode,
    drift_splits: built.drift_splits,
  };
  const key = rolloutRecordKey(view.rollout_id);
  const atifKey = rolloutAtifKey(view.rollout_id);
  await deps.blobs.put(key, JSON.stringify(record), "application/json");
  await deps.blobs.put(atifKey, JSON.stringify(toAtif(view)), "application/json");
  // The samples once more, alone and in the feed's binary layout: a pull reads these, never the
  // trajectory. Only for a rollout a trainer pulls (the others' records hold their samples): the
  // Arrow encode was a measured part of publication's CPU.
  if (built.samples.length > 0 && readers.trainer)
    await deps.blobs.put(
      rolloutSamplesKey(view.rollout_id),
      encodeSampleTable(built.samples).buffer as ArrayBuffer,
      ARROW_STREAM_MEDIA_TYPE,
    );
  const versions =
    view.llm_calls.length > 0
      ? view.llm_calls
      : [{ policy_version_start: 0, policy_version_end: 0 }];
  const message = ResultMessage.parse({
    schema_version: RESULT_MESSAGE_SCHEMA_VERSION,
    rollout_id: view.rollout_id,
    status: view.status,
    termination_reason: view.termination_reason,
    reward: view.reward,
    uid: placement.uid,
    sample_index: placement.sample_index,
    group_size: placement.group_size,
    batch_id: placement.batch_id,
    training_mode: placement.training_mode,
    data_manager: placement.data_manager,
    policy_version_start: Math.min(...versions.map((call) => call.policy_version_start)),
    policy_version_end: Math.max(...versions.map((call) => call.policy_version_end)),
    key,
    atif_key: atifKey,
    samples: built.samples.length,
    finished_at: view.finished_at ?? deps.now(),
    ...memberSignal(view, placement),
    generation: generationCounts(view.llm_calls),
    runner:
      view.final_runner_id !== null && view.final_attempt !== null
        ? { runner_id: view.final_runner_id, attempt: view.final_attempt }
        : null,
  });
  if (readers.trainer || readers.batch) await deps.results.send(message);
  return message;
}
