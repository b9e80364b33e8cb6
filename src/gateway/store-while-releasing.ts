/**
 * @module Storing a call while its admission is released: one sequential round trip less per
 * call on the HTTP gateway route (the stepwise driver does not wait at all: its releases ride on
 * its next admission, see release-on-next-admission.ts).
 */

/**
 * Waits for `storing`, started alongside the call's release, and for the release itself, which
 * is awaited first and whatever happens to the store, so an admission is never left to expire by
 * its ttl. `released` never rejects (a failed release reports the admitted version); the caller
 * corrects the stored call's `policy_version_end` when `versionEnd` differs from it (a weight
 * sync ended while the call ran).
 */
export async function storeWhileReleasing<T>(
  storing: Promise<T>,
  released: Promise<number>,
): Promise<{ stored: T; versionEnd: number }> {
  storing.catch(() => undefined); // observed now, awaited below once the release has landed
  const versionEnd = await released;
  return { stored: await storing, versionEnd };
}
