/** @module The check that every arm of `bench:sampling` saw the same outcomes: member rewards by sample key, compared across batches. */

/** How many member rewards were compared with the reference batch, and how many differed. */
export interface OutcomeCheck {
  compared: number;
  differing: number;
  batches: number;
  /** Up to 5 differences, `<label> <row>:<sample> <reward> vs <reward>`. */
  examples: string[];
}

/**
 * Compares each batch's member rewards with `reference`'s for the samples both finished. The
 * simulator draws a member's answer (and so its reward) and its length from the sample key and the
 * prompt, so any difference means two arms saw different outcomes.
 */
export function checkSameOutcomes(
  reference: ReadonlyMap<string, number>,
  others: ReadonlyArray<{ label: string; rewards: ReadonlyMap<string, number> }>,
): OutcomeCheck {
  const check: OutcomeCheck = { compared: 0, differing: 0, batches: others.length, examples: [] };
  for (const { label, rewards } of others) {
    for (const [key, reward] of rewards) {
      const expected = reference.get(key);
      if (expected === undefined) continue;
      check.compared += 1;
      if (expected === reward) continue;
      check.differing += 1;
      if (check.examples.length < 5)
        check.examples.push(`${label} ${key} ${reward} vs ${expected}`);
    }
  }
  return check;
}
