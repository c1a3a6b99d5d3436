import type { Prng } from './prng.js';

/**
 * How often each kind of fault strikes in one run, drawn from the run's seed (swarm testing, as
 * TigerBeetle's VOPR draws its options from the seed): one seed fails calls often and never loses
 * power, the next crashes at every chance and fails nothing. Fixed probabilities would explore
 * only the mixture around them; drawn ones, over many seeds, also reach the corners.
 */
export interface SwarmOptions {
  /** Chance that a crash (process kill or power loss) is armed during each unit of work. */
  readonly crashProbability: number;
  /** Chance of another crash while recovering from one. */
  readonly recrashProbability: number;
  /** Chance that one faultable call (a port method, an API write) fails. */
  readonly callFaultProbability: number;
  /** Chance that a crash is a power loss (only fsynced data survives) rather than a kill. */
  readonly powerLossProbability: number;
}

/** Each probability is sometimes exactly zero (that fault is off for the whole run). */
const OFF_CHANCE = 0.15;

/** A probability in [min, max], or 0 with OFF_CHANCE; a thousandth is fine enough. */
export function swarmProbability(prng: Prng, min: number, max: number): number {
  if (!(min >= 0 && max <= 1 && min <= max)) throw new RangeError(`swarmProbability(${min}, ${max})`);
  if (prng.chance(OFF_CHANCE)) return 0;
  return prng.between(Math.round(min * 1000), Math.round(max * 1000)) / 1000;
}

/**
 * The fault mix of one run, drawn from its PRNG (call it first, so the mix depends on the seed
 * alone). The ranges are set so that, over many seeds, each fault strikes at least as often on
 * average as the fixed probabilities the node simulations used before (crash 0.6, recrash 0.3,
 * call fault 0.05, power loss 0.5 of crashes).
 */
export function swarmOptions(prng: Prng): SwarmOptions {
  return {
    crashProbability: swarmProbability(prng, 0.45, 1),
    recrashProbability: swarmProbability(prng, 0.15, 0.6),
    callFaultProbability: swarmProbability(prng, 0.02, 0.12),
    powerLossProbability: swarmProbability(prng, 0.1, 1),
  };
}

/** `crash 0.41 recrash 0 faults 0.07 power-loss 0.5`: one trace line. */
export function describeSwarm(options: SwarmOptions): string {
  return `crash ${options.crashProbability} recrash ${options.recrashProbability} faults ${options.callFaultProbability} power-loss ${options.powerLossProbability}`;
}
