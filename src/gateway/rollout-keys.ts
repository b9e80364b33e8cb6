/** @module Per-rollout API keys: an HMAC of the rollout id, valid for that rollout's gateway only. */

const encoder = new TextEncoder();
const PREFIX = "erk";

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64url(text: string): string | null {
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(
      Uint8Array.from(binary, (c) => c.charCodeAt(0)),
    );
  } catch {
    return null;
  }
}

/**
 * Imported HMAC keys per secret, kept for the isolate's life: a CryptoKey is a plain value (no
 * request's I/O is tied to it), and importing it for every key checked was a measured cost of
 * each gateway call. A deployment has one or two secrets (rotation), so the map stays tiny.
 */
const importedKeys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = importedKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey(
      "raw",
      encoder.encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    // A failed import is not kept: the next call tries again.
    key.catch(() => importedKeys.delete(secret));
    importedKeys.set(secret, key);
  }
  return key;
}

async function mac(secret: string, rolloutId: string): Promise<Uint8Array> {
  return new Uint8Array(
    await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(`rollout:${rolloutId}`)),
  );
}

/**
 * The key for one rollout: `erk.<rollout id, base64url>.<HMAC-SHA256(secret, rollout id)>`. The
 * id is readable so a key presented to the wrong rollout can be told apart from a forged one.
 */
export async function rolloutKey(secret: string, rolloutId: string): Promise<string> {
  return `${PREFIX}.${base64url(encoder.encode(rolloutId))}.${base64url(await mac(secret, rolloutId))}`;
}

/** `ok`, a genuine key of `other_rollout`, or `invalid` (malformed or forged). Compared in constant time. */
export async function checkRolloutKey(
  secret: string,
  key: string,
  rolloutId: string,
): Promise<"ok" | "other_rollout" | "invalid"> {
  const [prefix, encodedId, signature, ...rest] = key.split(".");
  if (prefix !== PREFIX || !encodedId || !signature || rest.length > 0) return "invalid";
  const keyRollout = fromBase64url(encodedId);
  if (keyRollout === null) return "invalid";
  const expected = base64url(await mac(secret, keyRollout));
  let diff = expected.length ^ signature.length;
  for (let i = 0; i < Math.min(expected.length, signature.length); i++)
    diff |= expected.charCodeAt(i) ^ signature.charCodeAt(i);
  if (diff !== 0) return "invalid";
  return keyRollout === rolloutId ? "ok" : "other_rollout";
}
