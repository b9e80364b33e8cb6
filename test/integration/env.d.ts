declare namespace Cloudflare {
  interface Env {
    /** The vLLM simulator's root URL (without /v1), for tests that reconfigure it. */
    SIMULATOR_URL: string;
  }
}

declare namespace Cloudflare {
  /** Types `exports` from "cloudflare:workers" as the Worker's own entry module. */
  interface GlobalProps {
    mainModule: typeof import("../../functions/worker");
    durableNamespaces: "RolloutSession";
  }
}
