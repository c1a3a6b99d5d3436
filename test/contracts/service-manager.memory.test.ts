import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { MemoryFileSystem } from '../../src/adapters/node/memory/memory-file-system.js';
import { MemoryServiceManager, type AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import { serviceManagerContract, type GivenState } from './service-manager.contract.js';
import { SteppedClock } from './service-manager.support.js';

/** The slots live behind a directory link, so the real path differs from the path ExecStart names. */
const REAL_DIR = '/data/agent';
const EXEC_START = '/opt/agent/aks-flex-node-current';
const BEHAVIOURS: Readonly<Record<string, AgentBehaviour>> = {
  blue: 'healthy',
  green: 'healthy',
  crashing: 'crash-on-start',
  exiting: 'crash-after-start',
};

serviceManagerContract('MemoryServiceManager (memory clock)', async () => {
  const tree: Record<string, { file: string } | { symlink: string }> = { '/opt/agent': { symlink: REAL_DIR } };
  for (const build of Object.keys(BEHAVIOURS)) tree[`${REAL_DIR}/${build}`] = { file: `the ${build} build` };
  const fs = MemoryFileSystem.fromTree(tree);
  const behaviours = new Map<string, AgentBehaviour>();
  for (const [build, behaviour] of Object.entries(BEHAVIOURS))
    behaviours.set((await fs.hashFile(`${REAL_DIR}/${build}`, 1024)).sha256, behaviour);
  const clock = new SteppedClock(new MemoryClock());
  let latest: MemoryServiceManager | null = null;
  return {
    clock,
    builds: {
      blue: `${REAL_DIR}/blue`,
      green: `${REAL_DIR}/green`,
      crashing: `${REAL_DIR}/crashing`,
      exiting: `${REAL_DIR}/exiting`,
    },
    health: { timeoutMs: 12_000, stableMs: 1_500, pollMs: 250 },
    settleMs: 5_000,
    scheduledWithinMs: 5_000,
    point: (build) => fs.replaceSymlink(`${REAL_DIR}/aks-flex-node-current`, build.slice(REAL_DIR.length + 1)),
    given: async (state: GivenState) => {
      const initialActivity = state === 'absent' || state === 'inactive' ? state : 'active';
      const services = new MemoryServiceManager({
        fs,
        execStart: EXEC_START,
        behaviourOf: (digest) => behaviours.get(digest) ?? 'healthy',
        initialActivity,
        clock,
      });
      // The model's start: a restart of an active unit whose agent does not run yet.
      if (initialActivity === 'active') await services.restart();
      latest = services;
      return services;
    },
    runScheduledRestarts: async () => {
      await latest?.performScheduledRestarts();
    },
    cleanup: async () => undefined,
  };
});
