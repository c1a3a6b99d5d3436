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
    identity: { euid: 0, pid: 1, command: 'test' },
    logger: new RecordingLogger(),
    overrides: {},
  });
}

describe('composition root', () => {
  it('resolves every token with the "none" service platform', () => {
    const container = containerFor('none');
    expect(container.ok).toBe(true);
    if (!container.ok) return;
    const resolved = [
      container.value.get(Tokens.Config),
      container.value.get(Tokens.Layout),
      container.value.get(Tokens.HostIdentity),
      container.value.get(Tokens.FileSystem),
      container.value.get(Tokens.Clock),
      container.value.get(Tokens.Logger),
      container.value.get(Tokens.HostLock),
      container.value.get(Tokens.ServiceManager),
      container.value.get(Tokens.LayoutEngine),
    ];
    expect(resolved).toHaveLength(Object.keys(Tokens).length);
    for (const value of resolved) expect(value).toBeDefined();
  });

  it.each(['systemd', 'supervisor'] as const)('refuses the %s platform, not built yet, with E_CONFIG', (manager) => {
    expect(containerFor(manager)).toMatchObject({ ok: false, failure: { code: 'E_CONFIG' } });
  });
});
