/**
 * The simulation harness: what every simulation shares, so that one variable replays any of
 * them. The stable API (the fleet simulation may adopt it as it is):
 *
 * - `Prng`: the seeded generator; `new Prng(seed)`, then `int`, `between`, `chance`, `pick`,
 *   `weighted`.
 * - `seedFromEnv(defaultSeed)`: the seed `SIM_SEED` names, else the default; `seedOverride()`:
 *   that seed or null; `formatSeed(seed)`: `0x…`, as a failure prints it.
 * - `swarmOptions(prng)`: the run's fault mix (crash, recrash, call fault, power loss
 *   probabilities) drawn from the seed; `swarmProbability(prng, min, max)` for a simulation's own.
 * - `Checker<View>`, `problemsOf(view, checkers)`: invariants apart from the world they judge;
 *   `SimFailure`: the problems and the trace.
 * - `Trace`: one line per step, numbered: symbol, text, and the state it left.
 * - `replayCommand(file, testName, seed?)`: `SIM_SEED=0x… npx vitest run <file> -t '<name>'`;
 *   `currentReplayCommand(seed?)` for the test running now.
 */
export { problemsOf, SimFailure, type Checker } from './failure.js';
export { Prng } from './prng.js';
export { currentReplayCommand, replayCommand } from './replay.js';
export { formatSeed, SEED_VARIABLE, seedFromEnv, seedOverride } from './seed.js';
export { describeSwarm, swarmOptions, swarmProbability, type SwarmOptions } from './swarm.js';
export { Trace, type TraceLine } from './trace.js';
