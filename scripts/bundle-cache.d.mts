/** @module Types of scripts/bundle-cache.mjs (plain JavaScript, so the `edge-rollout` bin can use it before tsx). */
import type { BuildOptions } from "esbuild";

/** Where bundles are kept (ignored by git, with the rest of `.tmp`). */
export declare const BUNDLE_CACHE_DIR: string;

/**
 * Bundles with `options` unless a kept bundle of the same options and inputs (same bytes) exists;
 * resolves with the bundle's path. `outfile` names the file; its directory is not used.
 */
export declare function cachedBundle(options: BuildOptions & { outfile: string }): Promise<string>;
