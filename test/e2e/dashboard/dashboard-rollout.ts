/** @module A rollout's page: its token strip against the API's calls and the model server's text. */
import { join } from "node:path";
import { expect, it } from "vitest";
import { screenshotPath } from "../../fixtures/browser";
import { expectedStrip, text, type View, type DashboardContext } from "./dashboard-fixtures";

/** Registers these tests; `ctx` is filled by the file's beforeAll before any runs. */
export function rolloutPages(ctx: DashboardContext): void {
  it("rollout page: the calculator's token strip has one element per response token, with the API's masks, logprobs and policy versions", async () => {
    const { stack, api, page, train, detokenize } = ctx;
    const listing = await api.get<{ rollouts: Array<{ rollout_id: string }> }>(
      `/v1/batches/${train[0]}/rollouts?limit=100`,
    );
    let view: View | undefined;
    for (const { rollout_id } of listing.rollouts) {
      view = await api.get<View>(`/v1/rollouts/${rollout_id}`);
      if (view.llm_calls.length >= 2 && view.llm_calls.every((c) => c.trainable)) {
        await page.goto(`${stack.workerUrl}/rollouts/${rollout_id}`);
        break;
      }
    }
    expect(view!.llm_calls.length).toBeGreaterThanOrEqual(2);
    const expected = expectedStrip(view!.llm_calls);
    const shown = await page
      .locator(".strip .t")
      .evaluateAll((els) =>
        els.map((el) => [
          Number(el.getAttribute("data-id")),
          Number(el.getAttribute("data-mask")),
          Number(el.getAttribute("data-logprob")),
        ]),
      );
    // A model token shows the engine's text of it (vLLM's logprob token strings), whitespace made visible.
    const texts = await page.locator('.strip .t[data-mask="1"]').allTextContents();
    const strings = view!.llm_calls.flatMap((c) => c.completion_token_strs ?? []);
    expect(texts).toEqual(
      strings.map((text) =>
        text === ""
          ? ""
          : text.replace(/ /g, "\u00b7").replace(/\n/g, "\u21b5").replace(/\t/g, "\u2192"),
      ),
    );
    // A plain-text call's token texts, concatenated, are the backend's own detokenization of its completion ids.
    const plain = view!.llm_calls.findIndex((c) => !c.response_message.tool_calls?.length);
    expect(plain).toBeGreaterThanOrEqual(0);
    const from = view!.llm_calls
      .slice(0, plain)
      .reduce((sum, c) => sum + c.completion_token_ids.length, 0);
    const tokenTexts = await page
      .locator('.strip .t[data-mask="1"]')
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-token-text")));
    const plainIds = view!.llm_calls[plain]!.completion_token_ids;
    const detokenized = await detokenize(plainIds);
    expect(tokenTexts.slice(from, from + plainIds.length).join("")).toBe(detokenized);
    expect(detokenized).toContain("<|im_end|>");
    expect(
      await page.locator(`.strip .t.special[data-mask="1"][data-token-text="<|im_end|>"]`).count(),
    ).toBe(view!.llm_calls.length);
    // Context tokens (the prompt, tool results, template glue) show the backend's text too: those
    // before the last call's completion, concatenated, are its detokenization of that call's prompt ids.
    const last = view!.llm_calls[view!.llm_calls.length - 1]!;
    const promptTexts = await page
      .locator(".prompt-strip .p")
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-token-text")));
    const responseTexts = await page
      .locator(".strip .t")
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-token-text")));
    const contextTexts = [
      ...promptTexts,
      ...responseTexts.slice(0, last.prompt_token_ids.length - promptTexts.length),
    ];
    expect(contextTexts).toHaveLength(last.prompt_token_ids.length);
    expect(contextTexts.every((text) => typeof text === "string")).toBe(true);
    expect(contextTexts.join("")).toBe(await detokenize(last.prompt_token_ids));
    expect(
      await page
        .locator('.strip .t[data-mask="0"].special[data-token-text="<|im_start|>"]')
        .count(),
    ).toBeGreaterThan(0);
    expect(await page.locator(".prompt-strip .p.special").count()).toBeGreaterThan(0);
    expect(await page.locator(".sample").count()).toBe(1);
    expect(shown).toEqual(expected);
    expect(shown.filter(([, mask]) => mask === 1)).toHaveLength(
      view!.llm_calls.reduce((sum, c) => sum + c.completion_token_ids.length, 0),
    );
    const versions = await page
      .locator(".strip .call-mark")
      .evaluateAll((els) => els.map((el) => Number(el.getAttribute("data-policy-version"))));
    expect(versions).toEqual(view!.llm_calls.map((c) => c.policy_version_start));
    expect(await page.locator(".turn").count()).toBe(view!.llm_calls.length);
    await page.locator(".strip").first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: screenshotPath("rollout-token-strip"), fullPage: true });
    await page.locator(".sample details summary").first().click();
    await page
      .locator(".sample")
      .first()
      .screenshot({ path: screenshotPath("rollout-context-tokens") });
  });
}
