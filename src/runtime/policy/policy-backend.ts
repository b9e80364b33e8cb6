/** @module How the policy object validates a backend configuration before storing it. */
import { z } from "zod";
import { backendRegistry } from "../../gateway/backends/index";
import { BackendConfig } from "../../schemas/backend-config";

/**
 * A backend as `PUT /v1/policy` accepts it: `name` must be registered in the Worker's backend
 * registry, and the rest is checked by that backend's own schema (so a bad replica URL is
 * reported at `backend.replicas.0`) and stored with its defaults filled in. The gateway resolves
 * the stored config against the same registry, so what is accepted here is what it can build.
 */
export const PolicyBackend = BackendConfig.transform((value, ctx): BackendConfig => {
  const factory = backendRegistry.get(value.name);
  if (!factory) {
    ctx.addIssue({
      code: "custom",
      path: ["name"],
      message: `unknown backend "${value.name}"; known backends: ${backendRegistry.names().join(", ")}`,
    });
    return z.NEVER;
  }
  const parsed = factory.schema.safeParse(value);
  if (parsed.success) return parsed.data as BackendConfig;
  for (const issue of parsed.error.issues) {
    // Report an unknown key at its own path, as the registry does, rather than at `backend`.
    if (issue.code === "unrecognized_keys")
      for (const key of issue.keys)
        ctx.addIssue({
          code: "custom",
          path: [...issue.path, key],
          message: "is not a known field",
        });
    else ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  }
  return z.NEVER;
});
