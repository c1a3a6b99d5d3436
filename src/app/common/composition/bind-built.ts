import type { ContainerModuleLoadOptions, ResolutionContext, ServiceIdentifier } from 'inversify';

type TokenMap = Readonly<Record<string, ServiceIdentifier<unknown>>>;
export type Resolved<M extends TokenMap> = { [K in keyof M]: M[K] extends ServiceIdentifier<infer V> ? V : never };
export type Bind = ContainerModuleLoadOptions['bind'];

/**
 * The composition's one way to bind what has dependencies: they are named as a record of tokens
 * (`{ fs: Tokens.FileSystem, … }`), resolved field by field, and `build` makes the value from
 * that record. What comes from outside (the configuration, the logger, adapters that need
 * nothing) is bound with `toConstantValue`; no binding reads the container itself, unless a
 * comment next to it says why. Each value is a singleton of its container.
 */
export function bindBuilt<V, M extends TokenMap>(
  bind: Bind,
  token: ServiceIdentifier<V>,
  tokens: M,
  build: (dependencies: Resolved<M>) => V,
): void {
  bind(token).toDynamicValue((context) => build(resolveAll(context, tokens)));
}

function resolveAll<M extends TokenMap>(context: ResolutionContext, tokens: M): Resolved<M> {
  const resolved: Record<string, unknown> = {};
  for (const [field, token] of Object.entries(tokens)) resolved[field] = context.get(token);
  return resolved as Resolved<M>;
}
