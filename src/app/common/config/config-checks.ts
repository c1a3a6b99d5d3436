import * as t from 'typanion';
import { isCleanAbsolutePath } from '../../../domain/common/clean-path.js';
import { isTrustBaseUrl } from '../../../domain/common/trust/trust-settings.js';
import { isPlainText } from './config-text.js';

/**
 * The value checks both contexts' configuration files share (the node's, and the controller's
 * `--config`): plain text, clean paths and trusted base URLs, each reporting its failure under
 * the key being validated.
 */

/** Why a configuration is refused: the keys to change (none for a file-level problem) and what is wrong. */
export interface ConfigProblem {
  readonly keys: readonly string[];
  readonly problem: string;
}

/**
 * A string check that reports its failure under the key being validated. A bare predicate in a
 * cascade fails silently, and the refusal then names no key at all.
 */
export const refine = (test: (value: string) => boolean, problem: string) =>
  t.makeValidator<string, string>({
    test: (value, state): value is string => {
      if (test(value)) return true;
      state?.errors?.push(`${state.p ?? '.'}: ${problem}`);
      return false;
    },
  });

export const hasPlainText = refine(
  isPlainText,
  'must not contain control characters (C0, DEL, C1) or unpaired surrogates',
);
export const isAbsolutePathText = t.cascade(t.isString(), [
  hasPlainText,
  refine(isCleanAbsolutePath, 'must be an absolute, clean path (no ".", "..", "//" or trailing "/")'),
]);
/** An absolute path naming a file or a dedicated directory (never the root directory). */
export const isFilePathText = t.cascade(isAbsolutePathText, [
  refine((value) => value !== '/', 'must not be the root directory'),
]);
export const isBaseUrl = t.cascade(t.isString(), [
  hasPlainText,
  refine(isTrustBaseUrl, 'must be an absolute http(s) URL ending in "/", without user information, query or fragment'),
]);
export const integerIn = (low: number, high: number) =>
  t.cascade(t.isNumber(), [t.isInteger(), t.isInInclusiveRange(low, high)]);
