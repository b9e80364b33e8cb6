import { describe, expect, it } from "vitest";
import { parseCliOptions, simulatorArgs } from "../../../../tools/simulator/cli-options";
import { resolveOptions } from "../../../../tools/simulator/options";

describe("the engine's command-line flags", () => {
  it("round-trips the engine options through flags, the default curve by name", () => {
    const engine = {
      costModel: "default" as const,
      timeScale: 0.5,
      maxNumSeqs: 64,
      maxNumBatchedTokens: 2048,
      chunkedPrefill: false,
      tokenSourceUrl: "http://127.0.0.1:8100",
    };
    expect(parseCliOptions(simulatorArgs({ engine }))).toMatchObject({ engine });
    const curve = { fixedMs: 3, perSequenceMs: 0.1 };
    expect(parseCliOptions(simulatorArgs({ engine: { costModel: curve } }))).toMatchObject({
      engine: { costModel: curve },
    });
  });

  it("fills a partial curve with the default terms and refuses a bad one, naming the field", () => {
    const config = resolveOptions({ engine: { costModel: { fixedMs: 2 } } });
    expect(config.engine.costModel).toEqual({
      fixedMs: 2,
      perSequenceMs: 0.05,
      perPrefillTokenMs: 0.06,
      perKContextTokensMs: 0.04,
    });
    expect(resolveOptions({}).engine.costModel).toBeNull();
    expect(() => resolveOptions({ engine: { costModel: { fixedMs: -1 } } })).toThrow(
      /engine\.costModel\.fixedMs must be >= 0/,
    );
    expect(() => parseCliOptions(["--cost-model", "fast"])).toThrow(
      /--cost-model must be "default"/,
    );
  });
});
