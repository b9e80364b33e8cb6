/**
 * @module Online serving (docs/online.md): applications, their keys and settings, the serving
 * versions and their traffic split, feedback, and what an online session records of itself.
 */
import { z } from "zod";
import { BackendConfig } from "./backend-config";

/** The header that names a conversation: the OpenAI API is stateless, so the application says which one a call continues. */
export const ONLINE_SESSION_HEADER = "x-edge-rollout-session";
/** The header naming a prompt that recurs across conversations: sessions sharing it are grouped for the trainer. */
export const PROMPT_KEY_HEADER = "x-edge-rollout-prompt-key";

const DAY_MS = 86_400_000;

/** An application id, made by the server (`app-` and 12 hex digits): part of keys, object names and rollout ids. */
export const AppId = z
  .string()
  .regex(/^app-[0-9a-f]{12}$/, "app_id must be app- and 12 hex digits");
export type AppId = z.infer<typeof AppId>;

/** A session id or prompt key the application sends in a header: printable, bounded, safe in a rollout id. */
const HeaderName = (what: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,128}$/, `${what} must be 1-128 characters of A-Z a-z 0-9 . _ -`);

/** The conversation's id, from `x-edge-rollout-session` (or the path). */
export const OnlineSessionId = HeaderName("session id");
export type OnlineSessionId = z.infer<typeof OnlineSessionId>;
/** The recurring prompt's key, from `x-edge-rollout-prompt-key`. */
export const PromptKey = HeaderName("prompt key");

/** A key's request budget: a token bucket of `burst` requests refilled at `per_second`. */
export const RateLimit = z
  .object({
    per_second: z.number().positive("per_second must be > 0").max(100_000),
    burst: z.int().min(1, "burst must be >= 1").max(1_000_000),
  })
  .strict();
export type RateLimit = z.infer<typeof RateLimit>;

/** An application's settings; every field has a default. */
export const AppSettings = z
  .object({
    /** Default 20 requests/s, bursts of 40. */
    rate_limit: RateLimit.default({ per_second: 20, burst: 40 }),
    /** Calls and feedback are accepted this long after a session's first call; then it is scored or withheld. Default 24 h. */
    feedback_window_ms: z
      .int()
      .min(100, "feedback_window_ms must be >= 100")
      .max(30 * DAY_MS)
      .default(DAY_MS),
    /** A session (its calls: personal data) is deleted this long after its first call. Default 30 days. */
    retention_ms: z
      .int()
      .min(1_000, "retention_ms must be >= 1000")
      .max(365 * DAY_MS)
      .default(30 * DAY_MS),
    /** Sessions sharing a prompt key are grouped this many to a group (the feed releases a short group after its timeout). Default 4. */
    prompt_group_size: z.int().min(1).max(64, "prompt_group_size must be <= 64").default(4),
    /** The training mode of this application's groups: `online` (staleness bound 8) or `online/<k>`. */
    training_mode: z
      .string()
      .regex(/^online(\/(0|[1-9][0-9]{0,6}))?$/, "training_mode must be online or online/<k>")
      .default("online"),
  })
  .strict()
  .refine((s) => s.retention_ms >= s.feedback_window_ms, {
    path: ["retention_ms"],
    message: "retention_ms must be >= feedback_window_ms",
  });
export type AppSettings = z.infer<typeof AppSettings>;

/** `POST /v1/online/apps`. */
export const CreateAppRequest = z
  .object({
    name: z.string().min(1, "name must not be empty").max(100),
    settings: AppSettings.default(AppSettings.parse({})),
  })
  .strict();
export type CreateAppRequest = z.infer<typeof CreateAppRequest>;

/** An application as listed (never its key: only its first characters, to tell keys apart). */
export const AppView = z.object({
  app_id: AppId,
  name: z.string(),
  key_prefix: z.string(),
  created_at: z.number(),
  revoked_at: z.number().nullable(),
  settings: AppSettings,
});
export type AppView = z.infer<typeof AppView>;

/** A policy version named in the serving configuration: a non-negative integer, as a JSON object key. */
export const VersionKey = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,8})$/, "a version must be a non-negative integer");

/** Where one version is served: its replica pool (a backend config: `vllm` returns token ids; `openai` does not, so its sessions are untrainable). */
export const ServingVersion = z
  .object({ backend: BackendConfig, model: z.string().min(1).nullable().default(null) })
  .strict();
export type ServingVersion = z.infer<typeof ServingVersion>;

/** Traffic weights per version: non-negative, finite; at least one positive (checked against the versions by the split rule). */
export const SplitWeights = z.record(
  VersionKey,
  z
    .number()
    .refine(Number.isFinite, "a weight must be a finite number")
    .min(0, "a weight must be >= 0"),
);
export type SplitWeights = z.infer<typeof SplitWeights>;

/** `PUT /v1/online/serving`: the versions live traffic may be served by, and optionally the split. */
export const ServingConfigRequest = z
  .object({ versions: z.record(VersionKey, ServingVersion), weights: SplitWeights.optional() })
  .strict();
export type ServingConfigRequest = z.infer<typeof ServingConfigRequest>;

/** `PUT /v1/online/split`. */
export const SplitRequest = z.object({ weights: SplitWeights }).strict();
export type SplitRequest = z.infer<typeof SplitRequest>;

/** The serving configuration in force; `generation` grows with every change. */
export const ServingConfig = z.object({
  versions: z.record(VersionKey, ServingVersion),
  weights: SplitWeights,
  generation: z.int().min(0),
});
export type ServingConfig = z.infer<typeof ServingConfig>;

/** `POST /v1/online/sessions/:id/feedback`. */
export const FeedbackRequest = z
  .object({
    reward: z
      .number({ error: "reward must be a number" })
      .refine(Number.isFinite, "reward must be a finite number"),
    label: z.string().max(200).optional(),
    /** Who judged (a user's thumbs, the application's task check); default `default`. */
    source: z.string().min(1).max(100).default("default"),
  })
  .strict();
export type FeedbackRequest = z.infer<typeof FeedbackRequest>;

/** One feedback event as kept. */
export const FeedbackEvent = z.object({
  reward: z.number(),
  label: z.string().nullable(),
  source: z.string(),
  at: z.number(),
});
export type FeedbackEvent = z.infer<typeof FeedbackEvent>;

/** What an online session's rollout carries from its creation: whose it is and which version serves it (sticky). */
export const OnlineAssignment = z.object({
  app_id: AppId,
  session_id: OnlineSessionId,
  version: z.int().min(0),
  prompt_key: z.string().nullable(),
  serving: ServingVersion,
});
export type OnlineAssignment = z.infer<typeof OnlineAssignment>;

/** How a session ended up: open (calls and feedback accepted), scored, or withheld (its window closed without feedback). */
export const OnlineSessionStatus = z.enum(["open", "scored", "withheld"]);
export type OnlineSessionStatus = z.infer<typeof OnlineSessionStatus>;

/** What a session's samples say about it (`extra_fields.online`), and what its view shows. */
export const OnlineFields = z.object({
  app_id: z.string(),
  session_id: z.string(),
  version: z.int(),
  prompt_key: z.string().nullable(),
  status: OnlineSessionStatus,
  /** The combined reward (docs/online.md, "Feedback"); null when withheld. */
  reward: z.number().nullable(),
  rule: z.string(),
  feedback: z.array(FeedbackEvent),
});
export type OnlineFields = z.infer<typeof OnlineFields>;

/** One session as its application sees it (`GET /v1/online/sessions`). */
export const OnlineSessionView = z.object({
  session_id: z.string(),
  rollout_id: z.string(),
  version: z.int(),
  prompt_key: z.string().nullable(),
  status: OnlineSessionStatus,
  created_at: z.number(),
  closes_at: z.number(),
  expires_at: z.number(),
  feedback: z.array(FeedbackEvent),
  reward: z.number().nullable(),
});
export type OnlineSessionView = z.infer<typeof OnlineSessionView>;

/** Scored sessions per version, as the split guard counts them: how many, the sum and the sum of squares of their rewards. */
export const VersionOutcomes = z.object({
  sessions: z.int().min(0),
  sum: z.number(),
  sum_squares: z.number(),
});
export type VersionOutcomes = z.infer<typeof VersionOutcomes>;

/**
 * The split guard (off by default): takes a candidate out of the split once its reward is below
 * the `stable` version's with confidence (`z` standard errors: 2.58 ≈ 99%), each with at least
 * `min_sessions` scored sessions. Every action is logged.
 */
export const GuardConfig = z
  .object({
    enabled: z.boolean().default(false),
    stable: VersionKey.nullable().default(null),
    min_sessions: z.int().min(2, "min_sessions must be >= 2").max(1_000_000).default(30),
    z: z.number().positive("z must be > 0").max(10).default(2.58),
  })
  .strict()
  .refine((g) => !g.enabled || g.stable !== null, {
    path: ["stable"],
    message: "an enabled guard must name its stable version",
  });
export type GuardConfig = z.infer<typeof GuardConfig>;
