import { describe, expect, it } from 'vitest';
import { createContainer } from '../../src/app/composition/create-container.js';
import { FLEX_PROFILE } from '../../src/app/config/upgrader-config.js';
import { Tokens } from '../../src/app/tokens.js';
import { deriveLayout } from '../../src/domain/slot-layout.js';
import { RecordingLogger } from '../support/recording-logger.js';

const layout = (() => {
  const derived = deriveLayout({ root: '/sb', agentName: FLEX_PROFILE.agent.name, ...FLEX_PROFILE.paths });
  if (!derived.ok) throw new Error(derived.failure.message);
  return derived.value;
})();

function containerFor(manager: 'systemd' | 'supervisor' | 'none') {
  return createContainer({
    config: { ...FLEX_PROFILE, root: '/sb', service: { ...FLEX_PROFILE.service, manager } },
    layout,
    identity: { euid: 0, arch: 'amd64', pid: 1, command: 'test' },
    logger: new RecordingLogger(),
    overrides: {},
  });
}

describe('composition root', () => {
  it.each(['none', 'systemd', 'supervisor'] as const)(
    'resolves every token with the "%s" service platform',
    (manager) => {
      const container = containerFor(manager);
      const resolved = [
        container.get(Tokens.Config),
        container.get(Tokens.Layout),
        container.get(Tokens.HostIdentity),
        container.get(Tokens.FileSystem),
        container.get(Tokens.Clock),
        container.get(Tokens.Logger),
        container.get(Tokens.HostLock),
        container.get(Tokens.ArtifactSource),
        container.get(Tokens.ArchiveExtractor),
        container.get(Tokens.ProcessRunner),
        container.get(Tokens.ContainerRootfs),
        container.get(Tokens.ServiceManager),
        container.get(Tokens.LayoutEngine),
        container.get(Tokens.OperationStoreFactory),
      ];
      expect(resolved).toHaveLength(Object.keys(Tokens).length);
      for (const value of resolved) expect(value).toBeDefined();
      expect(container.get(Tokens.ServiceManager).name).toBe(manager);
    },
  );
});
