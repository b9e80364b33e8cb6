/**
 * @module The chunks of a resumable call with stop strings, as the caller gets them. The gateway
 * asks upstream for the stop string in the output (`include_stop_str_in_output: true`, see
 * `upstreamStopBody`), so the server holds nothing back and the text at a cut is all there; the
 * call's `StopWindow` then decides what the caller sees, across every leg: what vLLM would have
 * sent for the uninterrupted call (held back near a possible stop string, cut at one). A stop
 * string completed by a continuation's text ends the call there (`cutShort`): the pump closes the
 * continuation upstream, which vLLM aborts, so no later token is generated, relayed or counted.
 * The token ids end with the token that completed the stop string, as vLLM's do: its output
 * processor (vllm/v1/engine/output_processor.py, `process_outputs`) runs `stop_string =
 * req_state.detokenizer.update(new_token_ids, …)`, sets `finish_reason = STOP` and `stop_reason`
 * to it, and emits that step's new token ids before it aborts the request in the engine core
 * (`reqs_to_abort`); only the text is cut (detokenizer.py, `check_stop_strings`' `truncate_to`).
 */
import type { JsonObject } from "../schemas/json";
import {
  type CallCounts,
  type ChunkHead,
  chatChoiceOf,
  chatChunk,
  type CompletionChoice,
} from "./openai-chat";
import { type StopOptions, type StopRelease, StopWindow } from "./stop-window";

/** One rewritten chunk: null to drop it; `cutShort` when a stop string ended the call where the upstream did not. */
export interface RelayedChunk {
  chat: string | null;
  cutShort: boolean;
}

/** A first-leg chat choice or a continuation's completions choice. */
type Choice = CompletionChoice & { delta?: Record<string, unknown> };
type Chunk = { choices?: Choice[]; usage?: unknown } & Record<string, unknown>;

/**
 * A chat request as sent upstream for a resumable call with stop strings: the stop string in the
 * output, so vLLM holds back no text (its stop buffer) that a cut would lose. Unchanged otherwise.
 */
export function upstreamStopBody(body: JsonObject, stops: StopOptions | null): JsonObject {
  return stops && !stops.includeInOutput ? { ...body, include_stop_str_in_output: true } : body;
}

/** Rewrites a resumable call's upstream chunks through its stop window. */
export class StopRelay {
  readonly #window: StopWindow;
  readonly #options: StopOptions;
  readonly #reasoningFields = new Set<string>();

  constructor(options: StopOptions) {
    this.#options = options;
    this.#window = new StopWindow(options);
  }

  /** The whole text still held back (the call ended some other way, e.g. `length` on a refused resume). */
  flush(): Record<string, string> {
    return this.#delta(this.#window.finish(null), false);
  }

  /** The stop string that ended the call, if one did. */
  get stopped(): string | null {
    return this.#window.stopped;
  }

  /** One upstream payload (a first-leg chat chunk, or a continuation's completions chunk) for the caller. */
  rewrite(
    payload: string,
    continuation: boolean,
    head: ChunkHead | undefined,
    counts: () => CallCounts,
  ): RelayedChunk {
    const chunk = JSON.parse(payload) as Chunk;
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    if (!choice)
      return {
        chat: continuation ? this.#chatChunk(chunk, null, head!, counts()) : payload,
        cutShort: false,
      };
    // Ended by a stop string already: nothing after it reaches the caller.
    if (this.#window.stopped !== null) return { chat: null, cutShort: false };
    const tokens = choice.token_ids?.length ?? 0;
    const finish = choice.finish_reason ?? null;
    // Ended by a token (EOS, stop_token_ids): vLLM leaves that token's text out unless the caller
    // asked for stop strings in the output (detokenizer.py skips it); upstream was asked to include it.
    const tokenStop =
      finish === "stop" && typeof choice.stop_reason !== "string" && !this.#options.includeInOutput;
    let released: StopRelease;
    if (continuation) {
      released = this.#window.pushRaw(tokenStop ? "" : (choice.text ?? ""), tokens);
    } else {
      const delta = choice.delta ?? {};
      for (const field of ["reasoning", "reasoning_content"])
        if (typeof delta[field] === "string" && delta[field] !== "")
          this.#reasoningFields.add(field);
      const reasoning =
        typeof delta.reasoning === "string"
          ? delta.reasoning
          : typeof delta.reasoning_content === "string"
            ? delta.reasoning_content
            : "";
      const content = typeof delta.content === "string" ? delta.content : "";
      released = tokenStop
        ? this.#window.pushFields("", "", tokens)
        : this.#window.pushFields(reasoning, content, tokens);
    }
    if (finish !== null && released.stop === null) {
      const rest = this.#window.finish(
        typeof choice.stop_reason === "string" ? choice.stop_reason : null,
      );
      released = {
        reasoning: released.reasoning + rest.reasoning,
        content: released.content + rest.content,
        stop: rest.stop,
      };
    }
    const ended =
      released.stop !== null
        ? { finish_reason: "stop", stop_reason: released.stop }
        : finish === null
          ? {}
          : { finish_reason: finish, stop_reason: choice.stop_reason ?? null };
    const rewritten: Choice = {
      ...choice,
      delta: {
        ...this.#withoutText(choice.delta),
        ...this.#delta(released, choice.delta !== undefined && "content" in choice.delta),
      },
    };
    const out = continuation
      ? this.#chatChunk(chunk, { ...rewritten, ...ended }, head!, counts())
      : JSON.stringify({ ...chunk, choices: [{ ...rewritten, ...ended }] });
    return { chat: out, cutShort: released.stop !== null && finish === null };
  }

  /** The usage chunk of a call a stop string ended where the upstream did not (vLLM's last chunk with `include_usage`). */
  usageChunk(head: ChunkHead, counts: CallCounts): string {
    return chatChunk(head, [], counts);
  }

  #withoutText(delta: Record<string, unknown> | undefined): Record<string, unknown> {
    const { reasoning: _r, reasoning_content: _rc, content: _c, ...rest } = delta ?? {};
    return rest;
  }

  /** The released text as delta fields: reasoning in the field(s) the server used, content if any (or if the chunk had the key). */
  #delta(released: StopRelease, hadContent: boolean): Record<string, string> {
    const delta: Record<string, string> = {};
    if (released.reasoning !== "")
      for (const field of this.#reasoningFields.size > 0 ? this.#reasoningFields : ["reasoning"])
        delta[field] = released.reasoning;
    if (released.content !== "" || hadContent || released.reasoning === "")
      delta.content = released.content;
    return delta;
  }

  /** A continuation's completions chunk as the chat chunk the caller expects (see resumable-stream.ts). */
  #chatChunk(chunk: Chunk, choice: Choice | null, head: ChunkHead, counts: CallCounts): string {
    const choices = choice
      ? [
          chatChoiceOf(
            choice,
            choice.delta ?? {},
            choice.finish_reason ? { stop_reason: choice.stop_reason ?? null } : {},
          ),
        ]
      : [];
    return chatChunk(head, choices, chunk.usage ? counts : undefined);
  }
}
