// The PRNG lives in the simulation harness (./harness/prng.ts); this path stays for the fleet,
// rollout and bench code that imports it from here.
export { Prng } from './harness/prng.js';
