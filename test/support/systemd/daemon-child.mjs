// A daemon process for the real-systemd kill tests: one managed step (`start` = the startup gate,
// `handle` = one AgentUpgrade) over the built upgrader, with the operation store in a JSON file so
// it outlives the process. `KILL_AT` makes the process SIGKILL itself right after (or instead of)
// a chosen effect, so the test can cut a real process at every phase of the protocol.
import { readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { NodeFileSystem } from '../../../dist/adapters/node/host/node-file-system.js';
import { NodeProcessRunner } from '../../../dist/adapters/common/runtime/node-process-runner.js';
import { SystemClock } from '../../../dist/adapters/common/runtime/system-clock.js';
import { SystemdServiceManager } from '../../../dist/adapters/node/systemd/systemd-service-manager.js';
import { systemdAssets } from '../../../dist/app/node/composition/service-platform.module.js';
import { loadConfig } from '../../../dist/app/node/config/load-config.js';
import { createUpgrader } from '../../../dist/app/node/composition/create-upgrader.js';
import { deriveLayout } from '../../../dist/domain/node/layout/slot-layout.js';

const input = JSON.parse(process.env.DAEMON_CHILD ?? '{}');
const killAt = input.killAt ?? null;
const counts = new Map();

/** Dies here when this is the chosen effect's `occurrence`-th call (1-based). */
function maybeDie(target, method, args, when) {
  if (killAt === null || killAt.target !== target || killAt.method !== method || (killAt.when ?? 'after') !== when)
    return;
  if (killAt.path !== undefined && !String(args[0]).endsWith(killAt.path)) return;
  const key = `${target}.${method}.${killAt.path ?? ''}`;
  const seen = (counts.get(key) ?? 0) + 1;
  counts.set(key, seen);
  if (seen === (killAt.occurrence ?? 1)) process.kill(process.pid, 'SIGKILL');
}

function killable(target, object) {
  return new Proxy(object, {
    get(subject, name) {
      const value = subject[name];
      if (typeof value !== 'function') return value;
      return async (...args) => {
        maybeDie(target, name, args, 'before');
        const result = await value.apply(subject, args);
        maybeDie(target, name, args, 'after');
        return result;
      };
    },
  });
}

/** The cluster, as a JSON file: status per operation, every write in order, terminal changes counted. */
class FileOperationStore {
  constructor(path) {
    this.path = path;
  }
  load() {
    return existsSync(this.path) ? JSON.parse(readFileSync(this.path, 'utf8')) : { operations: {}, violations: [] };
  }
  save(state) {
    writeFileSync(`${this.path}.tmp`, JSON.stringify(state, null, 2));
    renameSync(`${this.path}.tmp`, this.path);
  }
  write(ref, entry) {
    const state = this.load();
    const operation = state.operations[ref.name];
    if (operation === undefined) return { kind: 'gone' };
    const terminal = operation.phase === 'Complete' || operation.phase === 'Failed';
    if (terminal) {
      const same =
        operation.phase === entry.phase && operation.reason === entry.reason && operation.message === entry.message;
      if (!same && entry.phase !== 'InProgress')
        state.violations.push({ name: ref.name, existing: operation.phase, attempted: entry.phase });
      this.save(state);
      return { kind: 'written' };
    }
    Object.assign(operation, entry);
    operation.history.push(entry);
    if (entry.phase === 'Complete' || entry.phase === 'Failed') operation.terminalWrites += 1;
    this.save(state);
    return { kind: 'written' };
  }
  async markInProgress(ref, message) {
    return this.write(ref, { phase: 'InProgress', reason: 'InProgress', message });
  }
  async publish(ref, status) {
    return this.write(ref, status);
  }
  async read(ref) {
    const operation = this.load().operations[ref.name];
    return operation === undefined ? null : { operation: ref, phase: operation.phase ?? null, parameters: {} };
  }
  /** The version the agent runs, as the daemon would annotate its Node. */
  async reportAgentVersion(version) {
    const state = this.load();
    state.agentVersions = [...(state.agentVersions ?? []), version];
    this.save(state);
    return 'written';
  }
  async *watch() {}
}

const silent = {
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
  fatal() {},
  child() {
    return silent;
  },
};
const fs = killable('fs', new NodeFileSystem());
const config = await loadConfig(new NodeFileSystem(), { root: input.root });
if (!config.ok) throw new Error(config.failure.message);
const layout = deriveLayout({ root: config.value.root, agentName: config.value.agent.name, ...config.value.paths });
if (!layout.ok) throw new Error(layout.failure.message);
const identity = {
  euid: 0,
  arch: input.arch,
  pid: process.pid,
  command: 'daemon-child',
  invocation: { executable: input.cli, configPath: null },
};
const services = killable(
  'services',
  new SystemdServiceManager({
    fs: new NodeFileSystem(),
    runner: new NodeProcessRunner(),
    clock: new SystemClock(),
    unit: config.value.service.unit,
    unitDir: layout.value.unitDir,
    assets: systemdAssets(config.value, layout.value, identity),
  }),
);
const upgrader = createUpgrader({
  config: config.value,
  identity,
  logger: silent,
  overrides: { fileSystem: fs, serviceManager: services },
});
if (!upgrader.ok) throw new Error(upgrader.failure.message);
const session = upgrader.value.managed({
  store: killable('store', new FileOperationStore(input.storePath)),
  selfExecutable: input.selfExecutable,
});
if (!session.ok) throw new Error(session.failure.message);
const result =
  input.mode === 'start'
    ? await session.value.start()
    : await session.value.handle({
        operation: input.operation,
        phase: input.phase ?? null,
        parameters: input.parameters,
      });
process.stdout.write(`${JSON.stringify(result)}\n`);
