/** @module Bounds on what a rollout's gateway reads. */

/**
 * Largest request body a rollout's gateway accepts: 4 MiB. A default `max_prompt_length` of
 * 131,072 tokens is ~0.5 MB of English text, but tokens of code, CJK text or JSON-escaped tool
 * output run to 10-15 bytes each (a 120k-token prompt of them is 1.8 MB), so 32 bytes per token
 * is the bound; the prompt's real length is then checked in tokens. Larger bodies would crowd the
 * 128 MB isolate that parses them while it serves other calls at the same time.
 */
export const MAX_GATEWAY_BODY_BYTES = 4 * 1024 * 1024;
