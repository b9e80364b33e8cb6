/**
 * @module Turn references: the opaque string the gateway puts in a reply so that, when a harness
 * sends that turn back (a Messages `thinking` block's `signature`, a Responses `reasoning` item's
 * `encrypted_content`), the translator can name the call that produced it. The string is
 * `edge-rollout.v1.` + base64url(UTF-8 of the call id), unpadded; harnesses resend it verbatim.
 */

const PREFIX = "edge-rollout.v1.";
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** base64url (RFC 4648 §5, no padding) of `text`'s UTF-8 bytes, with btoa: Worker code has no Buffer. */
function base64url(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The text `encoded` stands for, or null when it is not unpadded base64url of valid UTF-8. */
function fromBase64url(encoded: string): string | null {
  if (!BASE64URL.test(encoded) || encoded.length % 4 === 1) return null;
  try {
    const binary = atob(encoded.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}

/**
 * The turn reference for call `callId`.
 * @example mintTurnRef("call-1") // "edge-rollout.v1.Y2FsbC0x"
 */
export function mintTurnRef(callId: string): string {
  return PREFIX + base64url(callId);
}

/**
 * The call id a turn reference names, or null for anything the gateway did not mint (a real
 * Anthropic signature, a truncated or altered string). Only the canonical encoding is accepted,
 * so one call id has exactly one reference.
 */
export function readTurnRef(ref: string): string | null {
  if (!ref.startsWith(PREFIX)) return null;
  const encoded = ref.slice(PREFIX.length);
  const callId = fromBase64url(encoded);
  if (callId === null || callId === "" || base64url(callId) !== encoded) return null;
  return callId;
}
