/**
 * The one seed variable of the simulations: `SIM_SEED=<seed>` replays a run exactly. Decimal or
 * `0x` hexadecimal; anything else is refused, so a typo never silently runs the default seed.
 */
export const SEED_VARIABLE = 'SIM_SEED';

/** The seed `SIM_SEED` names, or `null` when it is unset or empty. */
export function seedOverride(env: NodeJS.ProcessEnv = process.env): number | null {
  const text = env[SEED_VARIABLE]?.trim();
  if (text === undefined || text === '') return null;
  const seed = Number(text);
  if (!Number.isSafeInteger(seed) || seed < 0)
    throw new RangeError(`${SEED_VARIABLE}=${text}: expected a non-negative integer (decimal or 0x…)`);
  return seed;
}

/** The seed `SIM_SEED` names, else `defaultSeed`. */
export function seedFromEnv(defaultSeed: number, env: NodeJS.ProcessEnv = process.env): number {
  return seedOverride(env) ?? defaultSeed;
}

/** `0x5eed0007`: how seeds are printed, so a printed seed pastes back into `SIM_SEED`. */
export function formatSeed(seed: number): string {
  return `0x${seed.toString(16)}`;
}
