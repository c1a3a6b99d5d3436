import { systemdCanNameProgram } from '../../../adapters/node/systemd/render-units.js';
import { isPathInside } from '../../../domain/node/layout/posix-path.js';
import { deriveLayout } from '../../../domain/node/layout/slot-layout.js';
import type { ConfigProblem } from '../../common/config/config-checks.js';
import { plainHttpTrustProblem } from '../../common/config/trust-section.js';
import { probeTimingProblem } from './probe-section.js';
import type { UpgraderConfig } from './upgrader-config.js';

/**
 * Rules across keys that each pass the schema alone but together make the upgrader unable to
 * do its job. Every refusal names the keys involved, so an operator knows what to change.
 * Paths are compared as configured (before `--root`): re-rooting keeps them distinct or equal alike.
 */
export function findRuleProblem(config: UpgraderConfig): ConfigProblem | null {
  return (
    healthProblem(config) ??
    probeTimingProblem(config.health) ??
    startLimitProblem(config) ??
    trustProblem(config) ??
    pathProblem(config) ??
    derivedLayoutProblem(config) ??
    systemdPathProblem(config)
  );
}

/**
 * The systemd units run the current link and the recovery script, both in the slot directory
 * under the root, as ExecStart's program, where systemd accepts no quote or backslash: a unit
 * naming one has a fatal error, so the agent would never start. Names the keys that hold one.
 */
export function systemdPathProblem(config: UpgraderConfig): ConfigProblem | null {
  if (config.service.manager !== 'systemd') return null;
  const named = { root: config.root, 'paths.slotDir': config.paths.slotDir };
  const keys = Object.entries(named)
    .filter(([, path]) => !systemdCanNameProgram(path))
    .map(([key]) => key);
  if (keys.length === 0) return null;
  return {
    keys,
    problem: `contains ', " or \\, and systemd cannot run the current link or the recovery script from such a path (service.manager "systemd")`,
  };
}

function healthProblem({ health }: UpgraderConfig): ConfigProblem | null {
  // Stability is judged at poll samples: a poll interval longer than it measures nothing.
  if (health.pollMs > health.stableMs) {
    return {
      keys: ['health.pollMs', 'health.stableMs'],
      problem: `the poll interval (${health.pollMs} ms) must not exceed the stable interval (${health.stableMs} ms)`,
    };
  }
  // The agent needs at least one poll interval to appear before the stable interval can start.
  if (health.stableMs + health.pollMs > health.timeoutMs) {
    return {
      keys: ['health.timeoutMs', 'health.stableMs', 'health.pollMs'],
      problem: `the timeout (${health.timeoutMs} ms) must be at least the stable interval plus one poll (${health.stableMs + health.pollMs} ms), or no activation can prove healthy`,
    };
  }
  return null;
}

function trustProblem({ trust, artifact }: UpgraderConfig): ConfigProblem | null {
  return plainHttpTrustProblem(trust, artifact.allowHttp);
}

function startLimitProblem({ service }: UpgraderConfig): ConfigProblem | null {
  // Restarts are at least restartSec apart: when burst of them cannot fit in the interval the
  // manager never gives up, so the recovery of a crash-looping candidate never runs.
  if (service.restartSec * service.startLimitBurst < service.startLimitIntervalSec) return null;
  return {
    keys: ['service.restartSec', 'service.startLimitBurst', 'service.startLimitIntervalSec'],
    problem: `restartSec × startLimitBurst (${service.restartSec * service.startLimitBurst} s) must be less than startLimitIntervalSec (${service.startLimitIntervalSec} s), or a crash loop never reaches recovery`,
  };
}

interface ConfiguredPath {
  readonly key: string;
  readonly path: string;
  readonly kind: 'file' | 'directory';
}

function configuredPaths(config: UpgraderConfig): readonly ConfiguredPath[] {
  const { paths } = config;
  return [
    { key: 'paths.entry', path: paths.entry, kind: 'file' },
    { key: 'paths.record', path: paths.record, kind: 'file' },
    { key: 'paths.state', path: paths.state, kind: 'file' },
    { key: 'paths.lock', path: paths.lock, kind: 'file' },
    { key: 'paths.daemonState', path: paths.daemonState, kind: 'file' },
    { key: 'service.supervisorSocket', path: config.service.supervisorSocket, kind: 'file' },
    { key: 'paths.slotDir', path: paths.slotDir, kind: 'directory' },
    { key: 'paths.unitDir', path: paths.unitDir, kind: 'directory' },
    ...(config.trust === null
      ? []
      : [
          { key: 'trust.rootFile', path: config.trust.rootFile, kind: 'file' as const },
          { key: 'trust.cacheDir', path: config.trust.cacheDir, kind: 'directory' as const },
        ]),
  ];
}

function pathProblem(config: UpgraderConfig): ConfigProblem | null {
  const all = configuredPaths(config);
  for (const [index, first] of all.entries()) {
    for (const second of all.slice(index + 1)) {
      const keys = [first.key, second.key];
      if (first.path === second.path) return { keys, problem: `both name ${first.path}` };
      const [outer, inner] = isPathInside(first.path, second.path)
        ? [first, second]
        : isPathInside(second.path, first.path)
          ? [second, first]
          : [null, null];
      if (outer === null || inner === null) continue;
      if (outer.kind === 'file')
        return { keys, problem: `${inner.path} lies inside ${outer.path}, which names a file` };
      // The unit directory belongs to the service manager: a write there could replace a unit.
      if (outer.key === 'paths.unitDir' || inner.key === 'paths.unitDir')
        return { keys, problem: `${inner.path} lies inside ${outer.path}` };
    }
  }
  const machines = config.container.machinesDir;
  for (const owned of all.filter((entry) => entry.kind === 'directory')) {
    // The container copy is written below machinesDir: it must never land on the host's own slots or units.
    if (isPathInside(machines, owned.path) || isPathInside(owned.path, machines)) {
      return {
        keys: ['container.machinesDir', owned.key],
        problem: `${machines} and ${owned.path} must not contain each other`,
      };
    }
  }
  return null;
}

/**
 * The layout the domain derives (slots, links, the recovery script and files beside the
 * record) must be valid too. Its refusal names roles, not keys, so the keys are found by
 * moving each configured file out of the way in turn: the ones whose move makes the layout
 * derivable are the ones in the collision.
 */
function derivedLayoutProblem(config: UpgraderConfig): ConfigProblem | null {
  const settings = { root: '/', agentName: config.agent.name, ...config.paths };
  const derived = deriveLayout(settings);
  if (derived.ok) return null;
  const keys = ['entry', 'slotDir', 'record', 'state', 'lock', 'daemonState', 'unitDir'] as const;
  const probe = unusedTopDirectory(Object.values(config.paths));
  const culprits = keys
    .filter((key) => deriveLayout({ ...settings, [key]: `${probe}/${key}` }).ok)
    .map((key) => `paths.${key}`);
  // No single move helps: what remains is what every derived name is made of.
  return { keys: culprits.length > 0 ? culprits : ['paths.slotDir', 'agent.name'], problem: derived.failure.message };
}

/** A top-level directory no configured path uses, so a probe path collides with nothing. */
function unusedTopDirectory(paths: readonly string[]): string {
  // Each path blocks at most one candidate, so one of the first paths.length + 1 is free.
  for (let attempt = 0; attempt < paths.length; attempt += 1) {
    const candidate = `/.agent-upgrade-probe-${attempt}`;
    if (!paths.some((path) => isPathInside(candidate, path))) return candidate;
  }
  return `/.agent-upgrade-probe-${paths.length}`;
}
