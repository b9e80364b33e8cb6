/** Integration: parquet datasets whose codec the Worker cannot decode (zstd, gzip) are refused with a 422. */
import { env } from "cloudflare:workers";
import { parquetWriteBuffer } from "hyparquet-writer";
import { describe, expect, it } from "vitest";
import { postBatch } from "../../../fixtures/datasets/batch-api";
import { api, uniqueId } from "../../../fixtures/rollouts";

/**
 * A one-row parquet file whose column chunks are labelled with `codec`. hyparquet-writer has no
 * zstd or gzip compressor built in, so an identity one keeps the pages raw; the reader goes by the
 * label, which is what a pyarrow file written with compression="zstd" carries.
 */
function parquetLabelled(codec: "ZSTD" | "GZIP" | "SNAPPY"): ArrayBuffer {
  const raw = (bytes: Uint8Array) => bytes;
  return parquetWriteBuffer({
    codec,
    compressors: { ZSTD: raw, GZIP: raw },
    columnData: [{ name: "data_source", data: ["openai/gsm8k"], type: "STRING" }],
  });
}

describe("parquet codecs", () => {
  it.each(["ZSTD", "GZIP"] as const)(
    "refuses a %s parquet dataset with a 422 naming the codec and dataset_key, and creates no batch",
    async (codec) => {
      const key = `datasets/${uniqueId(codec.toLowerCase())}.parquet`;
      await env.TRAJECTORIES.put(key, parquetLabelled(codec));
      const batchId = uniqueId(`codec-${codec.toLowerCase()}`);
      const response = await postBatch({
        batch_id: batchId,
        agent: "calculator",
        dataset_key: key,
        n: 1,
      });
      expect(response.status).toBe(422);
      expect(response.headers.get("content-type")).toContain("application/problem+json");
      const problem = (await response.json()) as {
        detail: string;
        errors?: Array<{ path: string; message: string }>;
      };
      expect(JSON.stringify(problem)).toMatch(new RegExp(codec, "i"));
      expect(problem.errors?.map((error) => error.path)).toContain("dataset_key");
      expect((await api(`/v1/batches/${batchId}`)).status).toBe(404);
    },
  );

  it("reads the same file written with snappy past decoding (it fails on the rows, not the codec)", async () => {
    const key = `datasets/${uniqueId("snappy")}.parquet`;
    await env.TRAJECTORIES.put(key, parquetLabelled("SNAPPY"));
    const response = await postBatch({
      batch_id: uniqueId("codec-snappy"),
      agent: "calculator",
      dataset_key: key,
      n: 1,
    });
    expect(response.status).toBe(422);
    expect(JSON.stringify(await response.json())).not.toMatch(
      /snappy|zstd|gzip|codec|compression/i,
    );
  });
});
