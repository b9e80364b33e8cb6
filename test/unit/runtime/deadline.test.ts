import { describe, expect, it } from "vitest";
import { DeadlineExceeded, withinDeadline } from "../../../src/runtime/deadline";

describe("withinDeadline", () => {
  it("passes a settled value or error through", async () => {
    await expect(withinDeadline(Promise.resolve(7), 1_000, "x")).resolves.toBe(7);
    await expect(withinDeadline(Promise.reject(new Error("boom")), 1_000, "x")).rejects.toThrow(
      "boom",
    );
  });

  it("stops waiting for work that never settles, naming it", async () => {
    const never = new Promise<number>(() => undefined);
    const error = await withinDeadline(never, 20, "ingesting results").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlineExceeded);
    expect((error as Error).message).toBe("ingesting results did not settle within 20 ms");
  });
});
