/** @module The soak's HTTP client: retries across a killed stack, counts every 5xx it is answered. */

/** Counters the client keeps for the report. */
export interface HttpTally {
  /** Answers with a 5xx status from the Worker (any route, the gateway included). */
  fivexx: number;
  /** The same, by `<status> <route kind>` (gateway, api), to tell an upstream's final 502/504 from a fault of ours. */
  fivexxBy: Record<string, number>;
  /** Requests that found no Worker listening (the stack was down), retried. */
  unreachable: number;
}

/** What a create ended with: its accepted answer, or why none came. */
export type CreateOutcome<T> = { ok: true; body: T } | { ok: false; reason: string };

/** A JSON client against the current Worker URL (which a restart keeps). */
export function createSoakHttp(baseUrl: () => string, tally: HttpTally) {
  /**
   * Sends until an answer that is not a 429/5xx or a refused connection arrives, up to
   * `attempts` times; returns the last answer. A 5xx is counted each time it is seen.
   */
  async function send(path: string, init: RequestInit = {}, attempts = 60): Promise<Response> {
    let last: Response | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        last = await fetch(`${baseUrl()}${path}`, init);
        if (last.status >= 500) {
          tally.fivexx++;
          const key = `${last.status} ${path.includes("/llm/") ? "gateway" : "api"}`;
          tally.fivexxBy[key] = (tally.fivexxBy[key] ?? 0) + 1;
        }
        if (last.status !== 429 && last.status < 500) return last;
        await last.arrayBuffer().catch(() => undefined);
      } catch {
        tally.unreachable++;
      }
      await new Promise((r) => setTimeout(r, Math.min(2_000, 100 * attempt)));
    }
    if (last) return last;
    throw new Error(`${path}: no Worker answered after ${attempts} attempts`);
  }

  async function json<T>(path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const init: RequestInit =
      body === undefined
        ? {}
        : {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body),
          };
    const response = await send(path, init);
    return { status: response.status, body: (await response.json().catch(() => ({}))) as T };
  }

  /**
   * POSTs an idempotent create until its answer is a 2xx whose body `complete` accepts, up to
   * `attempts` times. A kill can cut an answer between its status and its body (a 2xx with no
   * JSON), so a status alone does not prove the create's answer arrived; such an answer, a 5xx/429
   * and a stack that stays down are all retried. A 4xx other than 429 is final.
   */
  async function create<T>(
    path: string,
    body: unknown,
    complete: (body: T) => boolean,
    attempts = 30,
  ): Promise<CreateOutcome<T>> {
    let reason = "not sent";
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        const answer = await json<T>(path, body);
        if (answer.status >= 200 && answer.status < 300 && complete(answer.body))
          return { ok: true, body: answer.body };
        reason = `${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`;
        if (answer.status >= 400 && answer.status < 500 && answer.status !== 429) break;
      } catch (error) {
        // no Worker answered any of `send`'s attempts: the stack is down for longer; try again
        reason = String(error);
      }
      await new Promise((r) => setTimeout(r, Math.min(2_000, 200 * attempt)));
    }
    return { ok: false, reason };
  }

  return { send, json, create };
}

/** The soak's client type. */
export type SoakHttp = ReturnType<typeof createSoakHttp>;
