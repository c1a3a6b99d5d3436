import { describe, expect, it } from 'vitest';
import { TarGzExtractor } from '../../src/adapters/node/archive/tar-gz-extractor.js';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { MemoryContainerRootfs } from '../../src/adapters/node/memory/memory-container-rootfs.js';
import { MemoryFileSystem } from '../../src/adapters/node/memory/memory-file-system.js';
import { MemoryHostLock } from '../../src/adapters/node/memory/memory-host-lock.js';
import { MemoryOperationStore } from '../../src/adapters/node/memory/memory-operation-store.js';
import { MemoryProcessRunner } from '../../src/adapters/node/memory/memory-process-runner.js';
import { MemoryServiceManager } from '../../src/adapters/node/memory/memory-service-manager.js';
import { NoOperationStore } from '../../src/adapters/node/none/no-operation-store.js';
import { createContainer, memoryPlatform, type Platform } from '../../src/app/node/composition/create-container.js';
import { describeProcessGraph, SESSION_TOKENS } from '../../src/app/node/composition/process-graph.js';
import { createUpgrader } from '../../src/app/node/composition/create-upgrader.js';
import { FLEX_PROFILE } from '../../src/app/node/config/profiles.js';
import { type UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';
import { Tokens } from '../../src/app/node/tokens.js';
import { deriveLayout } from '../../src/domain/node/layout/slot-layout.js';
import { MemoryArtifactSource } from '../sim/managed-world.js';
import { RecordingLogger } from '../support/recording-logger.js';

const layout = (() => {
  const derived = deriveLayout({ root: '/sb', agentName: FLEX_PROFILE.agent.name, ...FLEX_PROFILE.paths });
  if (!derived.ok) throw new Error(derived.failure.message);
  return derived.value;
})();
const identity = { euid: 0, arch: 'amd64', pid: 1, command: 'test' } as const;
const configWith = (manager: 'systemd' | 'supervisor' | 'none'): UpgraderConfig => ({
  ...FLEX_PROFILE,
  root: '/sb',
  service: { ...FLEX_PROFILE.service, manager },
});
// The archive extractor is the real one on both platforms.
const PORTS = [
  'FileSystem',
  'Clock',
  'HostLock',
  'ArtifactSource',
  'ProcessRunner',
  'ContainerRootfs',
  'ServiceManager',
  'HealthProbe',
];

function memory(): Platform {
  const fs = MemoryFileSystem.fromTree({});
  const clock = new MemoryClock();
  return memoryPlatform({
    fileSystem: fs,
    clock,
    hostLock: new MemoryHostLock(),
    serviceManager: new MemoryServiceManager({ fs, execStart: layout.current, behaviourOf: () => 'healthy' }),
    containerRootfs: new MemoryContainerRootfs({
      fs,
      machinesDir: '/var/lib/machines',
      binaryPath: '/usr/local/bin/aks-flex-node',
      activeMachine: () => 'kube1',
      maxBytes: 1 << 20,
    }),
    processRunner: new MemoryProcessRunner(),
    artifactSource: new MemoryArtifactSource(),
    archiveExtractor: new TarGzExtractor(),
    operationStore: new MemoryOperationStore({ clock }),
  });
}

describe('composition root', () => {
  it.each(['none', 'systemd', 'supervisor'] as const)(
    'resolves every process token with the "%s" service platform',
    (manager) => {
      const container = createContainer({
        config: configWith(manager),
        layout,
        identity,
        logger: new RecordingLogger(),
        overrides: {},
      });
      for (const [name, token] of Object.entries(Tokens)) {
        if (SESSION_TOKENS.has(name)) continue;
        expect(container.get(token as never), name).toBeDefined();
      }
      expect(container.get(Tokens.ServiceManager).name).toBe(manager);
    },
  );

  it('a simulated process wires the same graph as a production one: only the ports differ', () => {
    const session = { store: new NoOperationStore(), selfExecutable: null, instanceId: '0'.repeat(32) };
    const production = describeProcessGraph(
      { config: configWith('systemd'), layout, identity, logger: new RecordingLogger(), overrides: {} },
      session,
    );
    const simulated = describeProcessGraph(
      {
        config: configWith('systemd'),
        layout,
        identity,
        logger: new RecordingLogger(),
        platform: memory(),
        overrides: {},
      },
      session,
    );
    expect(Object.keys(simulated)).toEqual(Object.keys(production));
    const differing = Object.keys(production).filter((name) => production[name] !== simulated[name]);
    expect(differing.sort()).toEqual([...PORTS].sort());
    // The use cases hold the ports themselves, not copies or wrappers of them.
    expect(production['Activation']).toContain('fs: <FileSystem>');
    expect(production['ManagedSession']).toContain('gate: StartupGate');
  });

  it('an override replaces the platform port for every use case (loaded last)', async () => {
    const lock = new MemoryHostLock();
    const held = await lock.tryAcquire({ pid: 77, command: 'another upgrader' });
    expect(held.kind).toBe('acquired');
    const config = { ...configWith('none'), container: { ...FLEX_PROFILE.container, manager: 'none' as const } };
    const created = createUpgrader({
      config,
      identity,
      logger: new RecordingLogger(),
      platform: memory(),
      overrides: { hostLock: lock },
    });
    if (!created.ok) throw new Error(created.failure.message);
    expect(await created.value.migrate()).toMatchObject({ ok: false, failure: { code: 'E_LOCK_BUSY' } });
    expect(await created.value.recover({ message: 'crash', failedRun: null })).toMatchObject({
      ok: true,
      value: { recovered: false },
    });
  });

  it('an unsupported architecture refuses the arch-bound use cases with E_WRONG_ARCH, not the others', async () => {
    const created = createUpgrader({
      config: configWith('none'),
      identity: { ...identity, arch: null },
      logger: new RecordingLogger(),
      platform: memory(),
    });
    if (!created.ok) throw new Error(created.failure.message);
    expect((await created.value.status()).ok).toBe(true);
    expect(await created.value.preflight({ candidatePath: '/tmp/x' })).toMatchObject({
      ok: false,
      failure: { code: 'E_WRONG_ARCH' },
    });
    expect(created.value.managed({ store: new NoOperationStore(), selfExecutable: null })).toMatchObject({
      ok: false,
      failure: { code: 'E_WRONG_ARCH' },
    });
  });
});
