/**
 * @module Which credential each route takes: one table, read by the guard that runs before every
 * route (so before any body is read) and by the tests that try every route without it. Kinds:
 * - `open`: nothing (health, the login form);
 * - `admin`: `Authorization: Bearer <API_TOKEN>` while API_TOKEN is set (open in local development
 *   without it, as every /v1 route always was);
 * - `rollout_key`: the rollout's own key from `POST /v1/rollouts` or a runner's claim, as a Bearer
 *   token or `x-api-key` (Anthropic clients), for the rollout in the path; always required;
 * - `dashboard`: a login session cookie, or the admin token (scripts), while API_TOKEN is set;
 * - `app_key`: an application key of online serving (`POST /v1/online/apps`), as a Bearer token or
 *   `x-api-key`, always required, then its rate limit (functions/online-auth.ts).
 * A path no entry names is `admin`: a route added without a line here is closed, not open.
 */

/** The credential a route takes. */
export type CredentialKind = "open" | "admin" | "rollout_key" | "dashboard" | "app_key";

/** The shape a refusal is written in: problem+json, or the error shape of the API the caller speaks. */
export type RefusalShape = "problem" | "anthropic" | "openai";

/** One line of the table: a Hono path pattern (`:param` one segment, `*` the rest) and its credential. */
export interface RouteCredential {
  path: string;
  kind: CredentialKind;
  shape: RefusalShape;
}

const line = (
  path: string,
  kind: CredentialKind,
  shape: RefusalShape = "problem",
): RouteCredential => ({
  path,
  kind,
  shape,
});

/** Both mounts of a rollout's gateway: its own, and a runner attempt's. */
const GATEWAYS = ["/v1/rollouts/:id/llm/v1", "/v1/rollouts/:id/attempts/:attempt/llm/v1"];

/** The table, first match wins. */
export const ROUTE_CREDENTIALS: readonly RouteCredential[] = [
  line("/health", "open"),
  line("/login", "open"),
  line("/logout", "open"),
  ...GATEWAYS.flatMap((root) => [
    line(`${root}/messages`, "rollout_key", "anthropic"),
    line(`${root}/messages/count_tokens`, "rollout_key", "anthropic"),
    line(`${root}/responses`, "rollout_key", "openai"),
    line(`${root}/*`, "rollout_key"),
  ]),
  // Online serving: an application's own routes (its apps, split and serving versions are admin's).
  line("/v1/online/chat/completions", "app_key", "openai"),
  line("/v1/online/models", "app_key", "openai"),
  line("/v1/online/sessions", "app_key"),
  line("/v1/online/sessions/*", "app_key"),
  line("/v1/*", "admin"),
  ...[
    "/",
    "/batches",
    "/batches/*",
    "/rollouts",
    "/rollouts/*",
    "/runs/*",
    "/groups/*",
    "/online",
    "/online/*",
  ].map((path) => line(path, "dashboard")),
];

/** What a path no line names takes. */
export const DEFAULT_CREDENTIAL: RouteCredential = line("*", "admin");

function patternOf(path: string): RegExp {
  const body = path
    .split("/")
    .map((part) =>
      part === "*"
        ? ".*"
        : part.startsWith(":")
          ? "[^/]+"
          : part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"),
    )
    .join("/");
  return new RegExp(`^${body}/?$`);
}

const COMPILED = ROUTE_CREDENTIALS.map((entry) => ({ entry, pattern: patternOf(entry.path) }));

/** The line for a request path (or a route's own pattern), else the default. */
export function credentialFor(path: string): RouteCredential {
  return COMPILED.find(({ pattern }) => pattern.test(path))?.entry ?? DEFAULT_CREDENTIAL;
}
