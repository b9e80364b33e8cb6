/**
 * @module A streamed chat call that a weight sync may interrupt and resume (partial rollouts).
 * Like `relayStream`, a pump reads upstream whatever the caller does. When told to interrupt, it
 * cancels the upstream read (vLLM aborts a request whose connection closes), keeps the ids and
 * logprobs so far, releases the admission and, once re-admitted under the new version, continues
 * with a completions request from token ids (interruptible.ts). The continuation's chunks are
 * rewritten as chat chunks of the same id, so the caller reads one continuous completion and the
 * record is assembled from one stream; each run of tokens keeps the version that produced it.
 */
import { openCallerStream } from "./caller-stream";
import type { CapturedOutput } from "./capture/captured-output";
import { SseDataReader } from "./capture/sse-data";
import { StreamAssembler } from "./capture/stream-assembler";
import { ContinuationReasoning, type ReasoningField } from "./continuation-reasoning";
import { addRun, type VersionRun } from "./interruptible";
import { type ChunkHead, chatChoiceOf, chatChunk, type CompletionChoice } from "./openai-chat";
import { StopRelay } from "./stop-relay";
import type { StopOptions } from "./stop-window";
import { type ProgressSink, ProgressTap } from "./stream-progress";

const encoder = new TextEncoder();

/** How the pump reaches the rest of the gateway. */
export interface ResumeDeps {
  /** Releases the current admission; resolves with the version in force then. */
  release(): Promise<number>;
  /**
   * Waits for a new admission (a sync refuses it until it ends), then opens the continuation of
   * `generated` tokens (or, cut before its first chunk, the call again: `restarted`). "length" when nothing is left to generate or the upstream refused the
   * longer prompt (the call ends `length`, never retried).
   */
  resume(
    promptIds: number[],
    generated: number[],
  ): Promise<{ response: Response; version: number; restarted: boolean } | "length">;
  /**
   * Registers the interrupt of the leg admitted under `legVersion` (replacing the previous one; a
   * sync that already began for that version calls it at once); null when the pump ends.
   */
  onInterrupt(interrupt: (() => void) | null, legVersion?: number): void;
}

/** How a resumable call ended: its capture, the version of each run of tokens, and how often it was interrupted. */
export interface ResumableEnd {
  outcome: "complete" | "aborted";
  captured: CapturedOutput | null;
  callerGone: boolean;
  runs: VersionRun[];
  interrupted: number;
}

/** Where a continuation's text goes: reasoning up to the think block's end when cut inside it, then content. */
interface TextRoute {
  split: ContinuationReasoning;
  field: ReasoningField;
}

/** The chat delta of a continuation chunk's text (vLLM sets only the fields it has: exclude_unset). */
function chatDelta(text: string, last: boolean, route: TextRoute): Record<string, string> {
  const { reasoning, content } = route.split.take(text, last);
  if (reasoning === "") return { content };
  return content === "" ? { [route.field]: reasoning } : { [route.field]: reasoning, content };
}

/** A completions chunk of the continuation as the chat chunk the caller expects. */
function asChatChunk(
  payload: string,
  head: ChunkHead,
  promptTokens: number,
  completionTokens: number,
  route: TextRoute,
): string {
  const chunk = JSON.parse(payload) as { choices?: CompletionChoice[]; usage?: unknown };
  const choices = (chunk.choices ?? []).map((choice) =>
    chatChoiceOf(
      choice,
      chatDelta(choice.text ?? "", Boolean(choice.finish_reason), route),
      choice.stop_reason !== undefined ? { stop_reason: choice.stop_reason } : {},
    ),
  );
  return chatChunk(head, choices, chunk.usage ? { promptTokens, completionTokens } : undefined);
}

/** What else a resumable stream is told: work to keep alive, the caller's leaving, the call's stop strings. */
export interface ResumableStreamOptions {
  keepAlive?: (work: Promise<unknown>) => void;
  callerGone?: AbortSignal;
  /** The call's stop strings, checked across every cut (stop-relay.ts), and whether its caller asked for a usage chunk. */
  stops?: { options: StopOptions; includeUsage: boolean };
  /** False when the caller wants only the record (an assembled reply): no chunk is forwarded. Default true. */
  relay?: boolean;
  /** Where the chunks received are kept at a cadence, so the call survives its owner's restart (stream-progress.ts). */
  progress?: ProgressSink;
  /**
   * A call its owner's restart cut: what was kept of it (chunks, version runs, interruptions). They
   * are replayed to the caller, and the call continues from their token ids as after a weight sync.
   */
  seed?: StreamSeed;
}

/** What a restarted owner kept of a call (stream-progress.ts). */
export interface StreamSeed {
  payloads: string[];
  runs: VersionRun[];
  interrupted: number;
}

/** How often a leg that broke before its first token (a malformed chunk, a dropped connection) starts over. */
const MAX_BROKEN_RESTARTS = 3;

/**
 * Relays `first` (a chat stream opened under `version`; null when resuming `options.seed`) and its
 * continuations to the caller; `finalize` runs once, before the final `data: [DONE]`, with the whole call.
 */
export function resumableStream(
  first: Response | null,
  version: number,
  deps: ResumeDeps,
  finalize: (end: ResumableEnd) => Promise<void>,
  options: ResumableStreamOptions = {},
): Response {
  const assembler = new StreamAssembler();
  const caller = openCallerStream(options.callerGone);
  const forward = (text: string): void => {
    if (options.relay !== false) caller.write(encoder.encode(text));
  };
  let runs: VersionRun[] = [{ from_token: 0, policy_version: version }];
  let interrupted = 0;
  let restarts = 0;
  let head: ChunkHead | undefined;
  let promptTokens = 0;
  // Set as the first continuation opens, from where the call was cut.
  let route: TextRoute | undefined;
  // With stop strings, every chunk goes through the call's stop window; `cutShort` once a stop
  // string ended the call where the upstream leg did not (it is closed, so vLLM aborts it).
  const relay = options.stops ? new StopRelay(options.stops.options) : null;
  let cutShort = false;
  const counts = () => ({ promptTokens, completionTokens: assembler.completionCount });
  const tap = options.progress ? new ProgressTap(options.progress) : null;
  /** Takes one chat chunk into the record (and the kept progress) and sends it to the caller. */
  const take = (chat: string): void => {
    const before = assembler.completionCount;
    assembler.push(chat);
    tap?.add(chat, assembler.completionCount - before);
    forward(`data: ${chat}\n\n`);
  };

  const end = async (outcome: "complete" | "aborted"): Promise<void> => {
    deps.onInterrupt(null);
    let captured: CapturedOutput | null;
    try {
      captured = outcome === "complete" ? assembler.finish() : assembler.partial();
    } catch (error) {
      console.error("stream capture failed", String(error));
      captured = null;
    }
    const aborted = outcome === "aborted" || caller.gone;
    await finalize({
      outcome: aborted ? "aborted" : "complete",
      captured: captured ?? (aborted ? assembler.partial() : null),
      callerGone: caller.gone,
      runs,
      interrupted,
    });
  };

  /** Reads one leg; "done" at its end, "interrupted" when the sync cut it, "broken" when it failed. */
  const readLeg = async (
    response: Response,
    continuation: boolean,
    legVersion: number,
  ): Promise<"done" | "interrupted" | "broken"> => {
    const source = response.body!.getReader();
    const reader = new SseDataReader();
    const decoder = new TextDecoder();
    let cut = false;
    deps.onInterrupt(() => {
      cut = true;
      void source.cancel("interrupted by a weight sync").catch(() => undefined);
    }, legVersion);
    let pending = "";
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await source.read();
      } catch {
        return cut ? "interrupted" : "broken";
      }
      // A cut that came as the generation finished: the call is whole, nothing to resume.
      if (cut) return assembler.soFar().finished ? "done" : "interrupted";
      pending += chunk.done ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
      try {
        pending = takeEvents(pending, chunk.done, reader, continuation);
      } catch (error) {
        // A chunk that is not valid JSON or not a chat chunk: the upstream broke the stream (a fault, a
        // dying server). The call ends like a broken connection, recorded and released, never thrown.
        console.error("upstream stream broken", String(error));
        void source.cancel("malformed upstream stream").catch(() => undefined);
        return "broken";
      }
      if (cutShort) {
        void source.cancel("a stop string ended the call").catch(() => undefined);
        return "done";
      }
      if (chunk.done) return "done";
    }
  };

  const setHead = (payload: string): void => {
    const parsed = JSON.parse(payload) as ChunkHead;
    head = { id: parsed.id, created: parsed.created, model: parsed.model };
    promptTokens = assembler.soFar().promptIds.length;
  };

  /** Parses and forwards the complete events in `pending`; returns what is left of it. */
  const takeEvents = (
    text: string,
    last: boolean,
    reader: SseDataReader,
    continuation: boolean,
  ): string => {
    let pending = text;
    let boundary: number;
    while ((boundary = pending.indexOf("\n\n")) >= 0 || (last && pending.length > 0)) {
      const stop = boundary >= 0 ? boundary + 2 : pending.length;
      const event = pending.slice(0, stop);
      pending = pending.slice(stop);
      for (const payload of reader.push(boundary >= 0 ? event : `${event}\n\n`)) {
        if (payload.trim() === "[DONE]" || cutShort) continue; // [DONE] is sent once, after the record is written
        let chat = payload;
        if (relay) {
          const relayed = relay.rewrite(payload, continuation, head, counts);
          if (relayed.chat === null) continue;
          ({ chat, cutShort } = relayed as { chat: string; cutShort: boolean });
        } else if (continuation)
          chat = asChatChunk(
            payload,
            head!,
            promptTokens,
            assembler.soFar().completionIds.length,
            route!,
          );
        take(chat);
        if (!continuation && head === undefined) setHead(payload);
        // Per chunk, not per read: a read may bring many chunks, and the bound is in tokens.
        tap?.maybeKeep(runs, interrupted);
      }
    }
    return pending;
  };

  const pump = (async () => {
    let leg: Response | null = first;
    let legVersion = version;
    let continuation = false;
    const seed = options.seed;
    if (seed) {
      // The kept chunks, to the caller and the record as first received; the call goes on from their ids.
      for (const payload of seed.payloads) {
        assembler.push(payload);
        forward(`data: ${payload}\n\n`);
        if (head === undefined) setHead(payload);
      }
      runs = seed.runs;
      interrupted = seed.interrupted;
      // Kept up to its last chunk but not recorded: the call is whole, nothing to generate.
      if (assembler.soFar().finished) return end("complete");
    }
    for (;;) {
      const result = leg ? await readLeg(leg, continuation, legVersion) : "resumed";
      if (result === "done") {
        // vLLM's last chunk, when the caller asked for usage: the upstream that would have sent it was closed.
        if (cutShort && options.stops?.includeUsage && head) {
          take(relay!.usageChunk(head, counts()));
        }
        return end("complete");
      }
      // A leg that broke before its first token is tried again from the start (as a broken
      // non-streamed body always was), a bounded number of times; later, the call ends aborted.
      const restart =
        result === "broken" &&
        assembler.soFar().completionIds.length === 0 &&
        restarts < MAX_BROKEN_RESTARTS;
      if (result === "broken" && !restart) return end("aborted");
      if (restart) restarts += 1;
      else if (result === "interrupted") interrupted += 1;
      if (result !== "resumed") await deps.release();
      const sofar = assembler.soFar();
      const { promptIds, completionIds } = restart ? { promptIds: [], completionIds: [] } : sofar;
      const next = await deps.resume(promptIds, completionIds);
      if (next === "length" && head !== undefined) {
        const finish = chatChunk(head, [
          { index: 0, delta: relay ? relay.flush() : {}, logprobs: null, finish_reason: "length" },
        ]);
        take(finish);
        return end("complete");
      }
      if (next === "length") return end("complete");
      runs = addRun(runs, completionIds.length, next.version);
      leg = next.response;
      legVersion = next.version;
      continuation = !next.restarted;
      // One route per call, made at its first continuation: text a later cut held back (a tag's
      // start) carries over to the next continuation.
      if (continuation)
        route ??= {
          split: new ContinuationReasoning(sofar.inReasoning),
          field: sofar.reasoningField ?? "reasoning",
        };
    }
  })().then(
    () => {
      forward("data: [DONE]\n\n");
      caller.close();
    },
    (error: unknown) => {
      console.error("resumable stream failed", error);
      void caller.fail(error);
    },
  );
  options.keepAlive?.(pump);
  return caller.response(first?.status ?? 200);
}
