/** One import for the hostile-archive builders. */
export { type Bytes, bytes, concatBytes, sha256Hex } from './bytes.js';
export * from './gzip.js';
export * from './not-gzip.js';
export * from './release.js';
export * from './tar.js';
export * from './tar-attacks.js';
export * from './tar-extensions.js';
