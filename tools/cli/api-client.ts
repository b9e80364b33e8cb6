/** @module A small client for the edge-rollout HTTP API that turns every failure into a CliError. */
import { OperationError, UnreachableError } from "./errors";

/** Where the API is and how to authenticate. */
export interface ApiClientOptions {
  /** Origin of the deployment, e.g. http://127.0.0.1:8787 (a trailing slash is fine). */
  url: string;
  /** Sent as `Authorization: Bearer <token>` when set. */
  token?: string | undefined;
  /** Per-request timeout. Default 60 000 ms. */
  timeoutMs?: number;
}

/** One HTTP answer: its status and parsed JSON body (null when empty or not JSON). */
export interface ApiResponse<T> {
  status: number;
  body: T;
}

/** The problem+json fields the API returns with every error. */
interface Problem {
  detail?: string;
  title?: string;
  errors?: Array<{ path?: string; message?: string }>;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/** The hint printed with an HTTP error status. */
function hintFor(status: number): string | undefined {
  if (status === 401 || status === 403)
    return "the API needs a token: pass --token or set EDGE_ROLLOUT_TOKEN";
  if (status === 413) return "the request is too large: submit fewer rows (--limit) per batch";
  return undefined;
}

/** Talks to one deployment; network failures throw UnreachableError, error statuses OperationError. */
export class ApiClient {
  readonly url: string;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;

  constructor(options: ApiClientOptions) {
    this.url = options.url.replace(/\/+$/, "");
    this.#token = options.token || undefined;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** `GET path`, throwing on any status but 2xx. */
  async get<T>(path: string): Promise<T> {
    return (await this.request<T>("GET", path)).body;
  }

  /** `POST path` with a JSON body, throwing on any status but 2xx. */
  async post<T>(path: string, body: unknown): Promise<T> {
    return (await this.request<T>("POST", path, body)).body;
  }

  /**
   * Sends one request. Statuses in `accept` are returned instead of thrown (2xx always are);
   * others become an OperationError carrying the problem's detail and field errors.
   */
  async request<T>(
    method: string,
    path: string,
    body?: unknown,
    accept: readonly number[] = [],
  ): Promise<ApiResponse<T>> {
    const headers = this.#headers({ accept: "application/json" });
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await this.#fetch(path, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(this.#timeoutMs),
    });
    const text = await response.text();
    const parsed = parseJson(text);
    if (response.ok || accept.includes(response.status))
      return { status: response.status, body: parsed as T };
    throw failure(method, path, response, parsed, text);
  }

  /**
   * `POST path` with a JSON body, asking for `accept`; returns the answer's content type and raw
   * bytes (a binary format). Error statuses throw as in `request`.
   */
  async postForBytes(
    path: string,
    body: unknown,
    accept: string,
  ): Promise<{ contentType: string; bytes: Uint8Array }> {
    const response = await this.#fetch(path, {
      method: "POST",
      headers: { ...this.#headers({ accept }), "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.#timeoutMs),
    });
    if (!response.ok) {
      const text = await response.text();
      throw failure("POST", path, response, parseJson(text), text);
    }
    return {
      contentType: response.headers.get("content-type") ?? "",
      bytes: new Uint8Array(await response.arrayBuffer()),
    };
  }

  /**
   * Opens `GET path` (with `body`: `POST path` with it as JSON) as a stream of server-sent events
   * and returns the response with its body unread. No timeout: a stream lasts as long as what it
   * follows. Error statuses throw as in `request`.
   */
  async openStream(
    path: string,
    headers: Record<string, string> = {},
    body?: unknown,
  ): Promise<Response & { body: ReadableStream<Uint8Array> }> {
    const method = body === undefined ? "GET" : "POST";
    const response = await this.#fetch(path, {
      method,
      headers: this.#headers({
        accept: "text/event-stream",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok || !response.body) {
      const text = await response.text();
      throw failure(method, path, response, parseJson(text), text);
    }
    return response as Response & { body: ReadableStream<Uint8Array> };
  }

  #headers(base: Record<string, string>): Record<string, string> {
    return this.#token ? { ...base, authorization: `Bearer ${this.#token}` } : { ...base };
  }

  async #fetch(path: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(`${this.url}${path}`, init);
    } catch (error) {
      throw new UnreachableError(this.url, error);
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return text === "" ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

/** The OperationError for an error status, with the problem's detail, field errors and a hint. */
function failure(
  method: string,
  path: string,
  response: Response,
  parsed: unknown,
  text: string,
): OperationError {
  const problem = (parsed ?? {}) as Problem;
  const detail = problem.detail ?? (text.slice(0, 200) || response.statusText);
  const hint = hintFor(response.status);
  return new OperationError(`${method} ${path} failed (${response.status}): ${detail}`, {
    status: response.status,
    details: problem.errors,
    ...(hint ? { hint } : {}),
  });
}
