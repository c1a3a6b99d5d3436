import * as t from 'typanion';
import type { TufTrustSettings } from '../../../domain/common/trust/trust-settings.js';
import { isBaseUrl, isFilePathText, type ConfigProblem } from './config-checks.js';

/**
 * The `trust` section (docs/configuration.md#trust), read alike by the node upgrader and the
 * fleet controller (`controller --config`), so that both verify releases against the same
 * repository with the same settings.
 */
export const isTrustSection = t.isObject({
  mode: t.isEnum(['tuf'] as const),
  rootFile: isFilePathText,
  metadataUrl: isBaseUrl,
  targetsUrl: isBaseUrl,
  mirrors: t.isOptional(t.cascade(t.isArray(isBaseUrl), [t.hasMaxLength(16)])),
  cacheDir: t.isOptional(isFilePathText),
});

export type TrustSection = t.InferType<typeof isTrustSection>;

/** The settings a checked section gives: no mirrors, and `defaultCacheDir`, unless it names them. */
export function trustSettingsOf(section: TrustSection, defaultCacheDir: string): TufTrustSettings {
  return { ...section, mirrors: section.mirrors ?? [], cacheDir: section.cacheDir ?? defaultCacheDir };
}

/**
 * Plain-HTTP repository URLs only where plain HTTP is allowed (`artifact.allowHttp`), naming
 * every key that holds one. Signatures make plain HTTP safe for the bytes, but not for the
 * privacy of what is fetched.
 */
export function plainHttpTrustProblem(trust: TufTrustSettings | null, allowHttp: boolean): ConfigProblem | null {
  if (trust === null || allowHttp) return null;
  const named = {
    'trust.metadataUrl': [trust.metadataUrl],
    'trust.targetsUrl': [trust.targetsUrl],
    'trust.mirrors': trust.mirrors,
  };
  const keys = Object.entries(named)
    .filter(([, urls]) => urls.some((url) => url.startsWith('http:')))
    .map(([key]) => key);
  if (keys.length === 0) return null;
  return { keys: [...keys, 'artifact.allowHttp'], problem: 'plain-HTTP repository URLs need artifact.allowHttp=true' };
}
