/** @module How the policy object validates a backend configuration before storing it. */
import { z } from "zod";
import { BackendConfig, OpenAiBackendConfig, VllmBackendConfig, VllmPdBackendConfig } from "../../schemas/backend-config";

// TODO(backend-registry): look the schema up in the registry of src/gateway/backends once it
// exists, so user-registered backends are validated too and unknown names are refused.
const BUILT_IN: Record<string, z.ZodType<BackendConfig>> = {
  vllm: VllmBackendConfig,
  vllm_pd: VllmPdBackendConfig,
  openai: OpenAiBackendConfig,
};

/**
 * A backend as `PUT /v1/policy` accepts it: a built-in name is checked against its own schema
 * (so a bad replica URL is reported at `backend.replicas.0`) and stored with its defaults filled
 * in; any other name passes with the loose BackendConfig shape.
 */
export const PolicyBackend = BackendConfig.transform((value, ctx) => {
  const schema = BUILT_IN[value.name];
  if (!schema) return value;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
  return z.NEVER;
});
