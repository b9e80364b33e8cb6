/**
 * End to end over real HTTP, on both runners: 32 long streamed generations in flight, the stack
 * killed with SIGKILL mid-stream (a crash: nothing is flushed or shut down) and started again on
 * the same state. Each rollout's session kept what its call received at the cadence
 * (src/gateway/stream-progress.ts), so the restarted session continues every call from its kept
 * token ids. Half the callers name their calls (`x-edge-rollout-call-id`), half are stock OpenAI
 * SDK calls that attach by asking the same request again; each reads one whole answer.
 *
 * What makes it unable to pass by luck: every call's answer, its record and the tokens its caller
 * saw before the kill are one sequence (the caller's pre-kill tokens are a prefix of the answer,
 * the answer is the record's ids, its length is exactly `max_tokens`: none dropped or doubled at
 * the seam); the record says it was resumed from `kept_tokens` ids; the tokens the caller had
 * seen beyond those (generated twice) are within the cadence; the simulator saw exactly one
 * continuation per call; no admission is left open and no call is recorded twice.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { startLocalStack } from "../../scripts/local-stack";
import { startMiniflareStack } from "../../scripts/miniflare-stack";
import { DEFAULT_PROGRESS_CADENCE } from "../../src/gateway/stream-progress";
import { CALL_ID_HEADER } from "../../src/schemas/llm-call";
import { startVllmSimulator } from "../../tools/simulator";
import { freePort } from "../../tools/simulator/free-port";

type Runner = "miniflare" | "wrangler";

const CALLS = 32;
/** Long enough that the slowest caller reaches READ_BEFORE_KILL seconds before the fastest could end (~5 s at 10 ms, ~18 s at 80 ms). */
const MAX_TOKENS: Record<Runner, number> = { miniflare: 800, wrangler: 500 };
/**
 * Decode pace per runner. `wrangler dev`'s proxy workerd opens a loopback connection after
 * connection under a fast stream load and runs out of file descriptors (measured: 16 streams at
 * 10 ms a token reached its 20,000 in 16 s, with or without this change; at 40 ms it held ~100),
 * and on a loaded CI machine 40 ms once stalled a stream for minutes; its streams go at 80 ms.
 */
const PER_TOKEN_MS: Record<Runner, number> = { miniflare: 10, wrangler: 80 };
/** The kill comes once every caller has read this many tokens: two cadence steps, so each has a batch kept. */
const READ_BEFORE_KILL = 2 * DEFAULT_PROGRESS_CADENCE.tokens + 20;

interface Stack {
  workerUrl: string;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

async function startStack(runner: Runner, port: number, stateDir: string, modelServerUrl: string) {
  const options = { workerPort: port, stateDir, modelServerUrl, onAgentLog: null } as const;
  if (runner === "wrangler") {
    const stack = await startLocalStack(options);
    return {
      workerUrl: stack.workerUrl,
      // A crash, not a shutdown: the whole workerd tree dies at once.
      kill: async () => {
        process.kill(-stack.wrangler.pid!, "SIGKILL");
        await stack.stop().catch(() => undefined);
      },
      stop: stack.stop,
    } satisfies Stack;
  }
  const stack = await startMiniflareStack(options);
  return {
    workerUrl: stack.workerUrl,
    kill: async () => {
      process.kill(stack.workerdPid!, "SIGKILL");
      await stack.stop().catch(() => undefined);
    },
    stop: stack.stop,
  } satisfies Stack;
}

async function json(url: string, init?: RequestInit): Promise<any> {
  const response = await fetch(url, {
    ...init,
    headers: { "content-type": "application/json", ...init?.headers },
  });
  return response.json();
}

/** One caller: its tokens before the stream broke, and the whole answer it read after asking again. */
interface Caller {
  rolloutId: string;
  named: boolean;
  before: number[];
  answer: number[];
  finish: string | null;
  tries: number;
}

/** Reads the call's stream; on a broken stream asks again (the same request, the same call id when named). */
async function runCaller(
  caller: Caller,
  maxTokens: number,
  baseURL: string,
  apiKey: string,
  started: (caller: Caller) => void,
): Promise<void> {
  // A stock client: its own retries cover the stack being down (connection refused) while it restarts.
  // A stream that stalls fails within a minute (then asked again) instead of holding the test.
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 30, timeout: 60_000 });
  const headers = caller.named ? { [CALL_ID_HEADER]: `call-${caller.rolloutId}` } : undefined;
  for (;;) {
    caller.tries += 1;
    const ids: number[] = [];
    try {
      const stream = await client.chat.completions.create(
        {
          model: "any",
          stream: true,
          max_tokens: maxTokens,
          // vLLM's own parameter (benchmarks use it): the generation runs to max_tokens.
          ignore_eos: true,
          messages: [
            { role: "user", content: `Tell me a long story, number ${caller.rolloutId}.` },
          ],
        } as OpenAI.ChatCompletionCreateParamsStreaming,
        headers ? { headers } : {},
      );
      for await (const chunk of stream) {
        const choice = chunk.choices[0] as { token_ids?: number[]; finish_reason: string | null };
        ids.push(...(choice?.token_ids ?? []));
        if (choice?.finish_reason) caller.finish = choice.finish_reason;
        if (caller.tries === 1 && ids.length >= READ_BEFORE_KILL) started(caller);
      }
      caller.answer = ids;
      return;
    } catch (error) {
      if (caller.tries === 1) caller.before = ids;
      if (caller.tries > 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

describe.each(["miniflare", "wrangler"] as const)(
  "generations in flight when the stack is SIGKILLed (--runner %s)",
  (runner) => {
    it("each complete once, token-exactly, from the ids their session kept", async () => {
      const parent = resolve(import.meta.dirname, "../../.tmp");
      mkdirSync(parent, { recursive: true });
      const stateDir = mkdtempSync(join(parent, "restart-resume-"));
      const sim = await startVllmSimulator({
        port: 0,
        seed: 5,
        latency: { ttftMs: 0, perTokenMs: PER_TOKEN_MS[runner] },
      });
      const port = await freePort();
      let stack: Stack = await startStack(runner, port, stateDir, sim.url);
      try {
        const callers: Caller[] = [];
        const running: Promise<void>[] = [];
        let reading = 0;
        let allReading!: () => void;
        const ready = new Promise<void>((resolve) => (allReading = resolve));
        const seen = new Set<Caller>();
        // Every rollout first, then every caller at once: the callers stream side by side.
        const rollouts: Array<{ rollout_id: string; llm: { base_url: string; api_key: string } }> =
          [];
        for (let i = 0; i < CALLS; i++)
          rollouts.push(
            await json(`${stack.workerUrl}/v1/rollouts`, {
              method: "POST",
              body: JSON.stringify({ agent: "external", task: { problem: `restart ${i}` } }),
            }),
          );
        rollouts.forEach((rollout, i) => {
          const caller: Caller = {
            rolloutId: rollout.rollout_id,
            named: i % 2 === 0,
            before: [],
            answer: [],
            finish: null,
            tries: 0,
          };
          callers.push(caller);
          running.push(
            runCaller(
              caller,
              MAX_TOKENS[runner],
              rollout.llm.base_url,
              rollout.llm.api_key,
              (c) => {
                if (seen.has(c)) return;
                seen.add(c);
                if (++reading === CALLS) allReading();
              },
            ),
          );
        });
        // A caller that fails, ends or stalls before the kill fails the test here, not by its timeout.
        let waiting: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          ready,
          Promise.all(running).then(() => {
            throw new Error("every call ended before the kill");
          }),
          new Promise((_, reject) => {
            waiting = setTimeout(
              () =>
                reject(
                  new Error(
                    `only ${reading}/${CALLS} callers read ${READ_BEFORE_KILL} tokens within 120 s`,
                  ),
                ),
              120_000,
            );
          }),
        ]).finally(() => clearTimeout(waiting));
        await stack.kill();
        stack = await startStack(runner, port, stateDir, sim.url);
        await Promise.all(running);

        const stats = sim.stats();
        // One continuation per call, from its kept ids; no call started again from its prompt.
        // Both counts and every caller at once, so a failure shows which calls ran again and how.
        expect({
          continuations: stats.byEndpoint["POST /v1/completions"],
          starts: stats.byEndpoint["POST /v1/chat/completions"],
          callers: callers.map(
            (c) => `${c.named ? "named" : "plain"} ${c.tries} ${c.before.length}`,
          ),
        }).toEqual({
          continuations: CALLS,
          starts: CALLS,
          callers: callers.map((c) => `${c.named ? "named" : "plain"} 2 ${c.before.length}`),
        });
        const kept: number[] = [];
        const twice: number[] = [];
        for (const caller of callers) {
          expect(caller.tries).toBe(2);
          expect(caller.finish).toBe("length");
          expect(caller.answer).toHaveLength(MAX_TOKENS[runner]);
          // What the caller saw before the kill is where the answer it read afterwards starts.
          expect(caller.before.length).toBeGreaterThanOrEqual(READ_BEFORE_KILL);
          expect(caller.answer.slice(0, caller.before.length)).toEqual(caller.before);
          const view = await json(`${stack.workerUrl}/v1/rollouts/${caller.rolloutId}`);
          expect(view.llm_calls).toHaveLength(1);
          const [call] = view.llm_calls;
          expect(call.completion_token_ids).toEqual(caller.answer);
          expect(call.restart).toMatchObject({
            restarts: 1,
            resumed: "token_ids",
            regenerated_tokens_max: DEFAULT_PROGRESS_CADENCE.tokens,
            reason: null,
          });
          expect(call.restart.kept_tokens).toBeGreaterThanOrEqual(DEFAULT_PROGRESS_CADENCE.tokens);
          // Tokens the caller had seen past the kept ones were generated twice: under one cadence step.
          expect(caller.before.length - call.restart.kept_tokens).toBeLessThanOrEqual(
            DEFAULT_PROGRESS_CADENCE.tokens,
          );
          expect(call.trainable).toBe(true);
          kept.push(call.restart.kept_tokens);
          twice.push(caller.before.length - call.restart.kept_tokens);
          if (caller.named)
            expect(call.call_id).toBe(`${caller.rolloutId}/gw/call-${caller.rolloutId}`);
        }
        expect((await json(`${stack.workerUrl}/v1/policy`)).in_flight).toBe(0);
        console.log(
          `restart (${runner}): ${CALLS}/${CALLS} calls complete once from their kept ids; kept ${Math.min(...kept)}-${Math.max(...kept)} tokens, seen past the kept ${Math.min(...twice)}-${Math.max(...twice)} (cadence ${DEFAULT_PROGRESS_CADENCE.tokens})`,
        );
      } finally {
        await stack.stop();
        await sim.close();
        rmSync(stateDir, { recursive: true, force: true });
      }
    }, 240_000);
  },
);
