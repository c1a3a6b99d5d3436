import type { ResolutionContext, ServiceIdentifier } from 'inversify';

type TokenMap = Readonly<Record<string, ServiceIdentifier<unknown>>>;
export type Resolved<M extends TokenMap> = { [K in keyof M]: M[K] extends ServiceIdentifier<infer V> ? V : never };

/**
 * A dependency record resolved field by field from tokens (`{ fs: Tokens.FileSystem, … }`): the
 * use cases take one such record, and naming each field's token keeps the wiring readable.
 */
export function resolveAll<M extends TokenMap>(context: ResolutionContext, tokens: M): Resolved<M> {
  const resolved: Record<string, unknown> = {};
  for (const [field, token] of Object.entries(tokens)) resolved[field] = context.get(token);
  return resolved as Resolved<M>;
}
