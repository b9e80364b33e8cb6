declare namespace Cloudflare {
  interface Env {
    /** The vLLM simulator's root URL (without /v1), for tests that reconfigure it. */
    SIMULATOR_URL: string;
  }
}
