/**
 * @module The rollouts part of the HTTP API as the demo, benchmarks and e2e tests use it: create,
 * read, wait for the end. Every request goes through the CLI's `ApiClient` (one client for the
 * API), so errors read the same everywhere.
 */
import { ApiClient } from "../tools/cli/api-client";
import { UnreachableError } from "../tools/cli/errors";
import type { RolloutView } from "../src/schemas/rollout-api";
import type { SqlCounts } from "../src/runtime/sql-counter";

const TERMINAL = new Set(["succeeded", "failed", "cancelled"]);

/** The `end` event of a rollout's event stream. */
export interface RolloutEnd {
  status: string;
  termination_reason: string | null;
  reward: number | null;
  steps: number;
}

/**
 * Runs `request` again (up to 3 times in all) when the connection failed before any answer: a
 * server may close an idle keep-alive connection just as a request goes out on it (ECONNRESET),
 * which under hundreds of concurrent streams happens now and then. Only for repeatable requests.
 */
async function repeatable<T>(request: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (error) {
      if (attempt >= 3 || !(error instanceof UnreachableError)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/** How far a rollout's event stream got: the last event id seen, and whether `created` came (a resumed `run` passes it to `waitForEnd`). */
export interface StreamProgress {
  lastEventId: string | undefined;
  created: boolean;
}

/**
 * Reads SSE frames until the `end` event and returns it (cancelling the rest), or undefined when
 * the stream closed first. Records the last step id and the `created` event in `progress`.
 */
async function readUntilEnd(
  response: Response & { body: ReadableStream<Uint8Array> },
  progress: StreamProgress,
): Promise<RolloutEnd | undefined> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let boundary: number;
    while ((boundary = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      const id = /^id: (.*)$/m.exec(frame)?.[1];
      if (id !== undefined && id !== "end") progress.lastEventId = id;
      if (/^event: created$/m.test(frame)) progress.created = true;
      if (/^event: end$/m.test(frame)) {
        const data = /^data: (.*)$/m.exec(frame)?.[1] ?? "{}";
        await response.body.cancel().catch(() => undefined);
        return JSON.parse(data) as RolloutEnd;
      }
    }
  }
  return undefined;
}

/** Talks to one edge-rollout deployment. */
export class RolloutClient {
  readonly #api: ApiClient;

  constructor(url: string, token?: string) {
    this.#api = new ApiClient({ url, token });
  }

  /**
   * `POST /v1/rollouts`; returns the rollout id. Throws with the problem detail on 4xx/5xx. The id
   * is chosen here when the body has none, so a create sent again after a dropped connection is
   * the same rollout (creation is idempotent by id).
   */
  async create(body: {
    agent: string;
    task: unknown;
    config?: unknown;
    rollout_id?: string;
  }): Promise<string> {
    const withId = { ...body, rollout_id: body.rollout_id ?? crypto.randomUUID() };
    return (await repeatable(() => this.#api.post<{ rollout_id: string }>("/v1/rollouts", withId)))
      .rollout_id;
  }

  /** `POST /v1/rollouts/:id/fork`: n children sharing the rollout's first `at_step` steps; returns their ids. */
  async fork(
    rolloutId: string,
    body: { at_step: number; n: number; rollout_ids?: string[]; config?: unknown },
  ): Promise<{ children: Array<{ rollout_id: string }> }> {
    // With the children's ids chosen here, a fork sent again after a dropped connection makes the same children.
    const withIds = {
      ...body,
      rollout_ids: body.rollout_ids ?? Array.from({ length: body.n }, () => crypto.randomUUID()),
    };
    return repeatable(() =>
      this.#api.post<{ children: Array<{ rollout_id: string }> }>(
        `/v1/rollouts/${rolloutId}/fork`,
        withIds,
      ),
    );
  }

  /** What the rollout's session served and did in SQLite since its object started (`GET /v1/rollouts/:id/usage`). */
  async usage(rolloutId: string): Promise<{
    requests: { total: number; by_method: Record<string, number>; since: number };
    sqlite: SqlCounts;
  }> {
    return repeatable(() =>
      this.#api.get<{
        requests: { total: number; by_method: Record<string, number>; since: number };
        sqlite: SqlCounts;
      }>(`/v1/rollouts/${rolloutId}/usage`),
    );
  }

  /** `GET /v1/rollouts/:id`. */
  async get(rolloutId: string): Promise<RolloutView> {
    return repeatable(() => this.#api.get<RolloutView>(`/v1/rollouts/${rolloutId}`));
  }

  /**
   * Creates a rollout and follows it to its end in one request (`stream: true`): the answer is
   * its event stream. A stream lost after the `created` event is resumed from the last step seen
   * with `GET …/events`; one lost before it is created again (same id, so the same rollout).
   */
  async run(body: {
    agent: string;
    task: unknown;
    config?: unknown;
    rollout_id?: string;
  }): Promise<{ rolloutId: string; end: RolloutEnd }> {
    const withId = { ...body, rollout_id: body.rollout_id ?? crypto.randomUUID(), stream: true };
    const progress: StreamProgress = { lastEventId: undefined, created: false };
    for (let attempt = 0; !progress.created; attempt++) {
      if (attempt === 3)
        throw new Error(`creating ${withId.rollout_id} kept failing before its created event`);
      try {
        const response = await this.#api.openStream("/v1/rollouts", {}, withId);
        const end = await readUntilEnd(response, progress);
        if (end) return { rolloutId: withId.rollout_id, end };
      } catch (error) {
        if (!(error instanceof UnreachableError || error instanceof TypeError)) throw error;
      }
    }
    return {
      rolloutId: withId.rollout_id,
      end: await this.waitForEnd(withId.rollout_id, 20, progress),
    };
  }

  /**
   * Resolves with the `end` event of a rollout's SSE stream (status, termination_reason, reward):
   * one open stream per rollout costs the server far less than repeated full GETs. A stream that
   * closes early (a restart, an evicted object) is reopened after the last event seen.
   */
  async waitForEnd(
    rolloutId: string,
    reconnects = 5,
    progress: StreamProgress = { lastEventId: undefined, created: true },
  ): Promise<RolloutEnd> {
    for (let attempt = 0; attempt <= reconnects; attempt++) {
      try {
        const response = await this.#api.openStream(
          `/v1/rollouts/${rolloutId}/events`,
          progress.lastEventId === undefined ? {} : { "last-event-id": progress.lastEventId },
        );
        const end = await readUntilEnd(response, progress);
        if (end) return end;
      } catch (error) {
        // A connection dropped before or during the stream is one more reconnect, after the last event seen.
        if (
          !(error instanceof UnreachableError || error instanceof TypeError) ||
          attempt >= reconnects
        )
          throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 200 * (attempt + 1)));
    }
    throw new Error(`event stream of ${rolloutId} kept closing before its end event`);
  }

  /** Polls until every rollout is terminal; calls `onProgress` with the number done. */
  async waitAll(
    rolloutIds: string[],
    options: { timeoutMs?: number; pollMs?: number; onProgress?: (done: number) => void } = {},
  ): Promise<RolloutView[]> {
    const deadline = Date.now() + (options.timeoutMs ?? 300_000);
    const done = new Map<string, RolloutView>();
    while (done.size < rolloutIds.length) {
      if (Date.now() > deadline)
        throw new Error(`${rolloutIds.length - done.size} rollouts still running after timeout`);
      const pending = rolloutIds.filter((id) => !done.has(id));
      // Bounded parallel polling: a handful of GETs at once is plenty for a local stack.
      for (let i = 0; i < pending.length; i += 16) {
        const views = await Promise.all(pending.slice(i, i + 16).map((id) => this.get(id)));
        for (const view of views) if (TERMINAL.has(view.status)) done.set(view.rollout_id, view);
      }
      options.onProgress?.(done.size);
      if (done.size < rolloutIds.length)
        await new Promise((r) => setTimeout(r, options.pollMs ?? 200));
    }
    return rolloutIds.map((id) => done.get(id)!);
  }
}
