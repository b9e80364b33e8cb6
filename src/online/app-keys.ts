/**
 * @module Application keys: `ero_<app_id>_<secret>`, shown once at creation and stored only as
 * their SHA-256 (WebCrypto). The app id in the key says where its hash is kept, so a key is
 * checked without a scan; the secret's 32 random bytes make guessing it hopeless.
 */
import { AppId } from "../schemas/online";

const KEY_PATTERN = /^ero_(app-[0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;
const encoder = new TextEncoder();

/** Base64url without padding. */
function base64url(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** A new application id: `app-` and 12 random hex digits. */
export function newAppId(): AppId {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return `app-${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** A new key for `appId` (shown once: only its hash is stored). */
export function newAppKey(appId: AppId): string {
  return `ero_${appId}_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/** The app id a presented key names; null when it is not shaped as an application key. */
export function appIdOfKey(key: string): AppId | null {
  const match = KEY_PATTERN.exec(key);
  return match && AppId.safeParse(match[1]).success ? match[1]! : null;
}

/** The stored form of a key: its SHA-256, hex. */
export async function hashAppKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(key));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The part of a key that may be shown in listings, to tell keys apart. */
export function keyPrefix(key: string): string {
  return `${key.slice(0, "ero_app-".length + 12 + 5)}…`;
}
