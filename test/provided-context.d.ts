/** Values test/global-setup.ts hands to test projects with `project.provide`. */
declare module "vitest" {
  export interface ProvidedContext {
    /** Root URL (no /v1) of the vLLM simulator started for the run. */
    simulatorUrl: string;
    /** Root URL of a second simulator that waits 1.5 s before its first token (calls held in flight). */
    slowSimulatorUrl: string;
    /** Root URL of a third simulator that paces tokens 25 ms apart, 160+ per answer (calls interrupted mid-generation). */
    pacedSimulatorUrl: string;
    /** Root URL of a simulator paced like the third, its second replica in two-replica tests (never reconfigured). */
    pacedPeerSimulatorUrl: string;
    /** Root URL of a simulator paced like the third that only the partial-rollout tests use: they reconfigure it. */
    partialRolloutsSimulatorUrl: string;
    /** Root URL of a simulator with a 24-block KV cache and 10 ms steps, read by the pressure-control test alone. */
    pressureSimulatorUrl: string;
    /** Base URL of the supervised sandbox host (scripts/sandbox-host.ts): the Worker's SANDBOX_URL. */
    sandboxUrl: string;
    /** Root URL of a loopback server answering `GET /<key>` with node_modules/pyodide's file for that R2 key (scripts/pyodide-uploads.ts). */
    pyodideFilesUrl: string;
  }
}
export {};
