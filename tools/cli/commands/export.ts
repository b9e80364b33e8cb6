/** @module `edge-rollout export ROLLOUT --format atif|json`: one rollout as a document on stdout or in a file. */
import { writeFileSync } from "node:fs";
import { toAtif } from "../../../src/sink/formats/atif";
import type { ApiClient } from "../api-client";
import { OperationError } from "../errors";
import type { Output } from "../output";
import { readRollout } from "./show";

/** Export formats: ATIF v1.7 (Harbor's trajectory format) or the API's view as is. */
export type ExportFormat = "atif" | "json";

/** The export formats `--format` accepts. */
export const EXPORT_FORMATS: readonly ExportFormat[] = ["atif", "json"];

/**
 * Writes the document (pretty JSON) to `outPath`, or to stdout without one. ATIF is built with
 * the sink's `toAtif`, the same function that writes `rollouts/<id>/atif.json` to R2.
 */
export async function runExport(
  rolloutId: string,
  options: { format: ExportFormat; out?: string | undefined },
  client: ApiClient,
  out: Output,
): Promise<0> {
  const view = await readRollout(client, rolloutId);
  const doc = options.format === "atif" ? toAtif(view) : view;
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  if (options.out === undefined) {
    // The document itself is the output, in both modes: `--json` changes nothing but error reports.
    out.stdout.write(text);
    return 0;
  }
  try {
    writeFileSync(options.out, text);
  } catch (error) {
    throw new OperationError(
      `cannot write ${options.out}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const bytes = Buffer.byteLength(text);
  out.result(
    { ok: true, rollout_id: rolloutId, format: options.format, path: options.out, bytes },
    () => `wrote ${options.format} of ${rolloutId} to ${options.out} (${bytes} bytes)`,
  );
  return 0;
}
