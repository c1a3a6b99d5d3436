import { Tokens } from '../tokens.js';
import type { SessionOptions } from '../managed/session-options.js';
import type { ServiceIdentifier } from 'inversify';
import { createContainer, sessionContainer, type ContainerInput } from './create-container.js';

/** What the caller or the platform supplies: shown by token, so two platforms' graphs compare. */
const GIVEN = [
  'Config',
  'Layout',
  'HostIdentity',
  'Logger',
  'FileSystem',
  'Clock',
  'HostLock',
  'ArtifactSource',
  'ArchiveExtractor',
  'ProcessRunner',
  'ContainerRootfs',
  'ServiceManager',
  'HealthProbe',
  'OperationStoreFactory',
  'OperationStore',
] as const;
/** Tokens bound per daemon session (a child container), not per process. */
export const SESSION_TOKENS: ReadonlySet<string> = new Set<string>([
  'OperationStore',
  'SessionOptions',
  'SessionState',
  'StartupGate',
  'AgentUpgradeHandler',
  'ManagedSession',
  'AgentVersionReport',
]);
const DEPTH_MAX = 3;

/**
 * The object graph a process wires, as text: for every token, the class of what it resolves to
 * and, a few levels down, the classes of what that holds. Ports and caller-supplied values are
 * named by their token, so a production process and a simulated one describe the same graph
 * exactly when they run the same use cases over different ports.
 */
export function describeProcessGraph(input: ContainerInput, options: SessionOptions): Record<string, string> {
  const process = createContainer(input);
  const session = sessionContainer(process, options);
  const resolve = (name: keyof typeof Tokens): unknown =>
    (SESSION_TOKENS.has(name) ? session : process).get(Tokens[name] as ServiceIdentifier<unknown>);
  const names = new Map<unknown, string>();
  for (const name of GIVEN) names.set(resolve(name), `<${name}>`);
  const graph: Record<string, string> = {};
  for (const name of Object.keys(Tokens) as (keyof typeof Tokens)[]) {
    graph[name] = describeValue(resolve(name), names, 0);
  }
  return graph;
}

function describeValue(value: unknown, names: ReadonlyMap<unknown, string>, depth: number): string {
  const known = names.get(value);
  if (known !== undefined && depth > 0) return known;
  if (typeof value === 'function') return 'function';
  if (value === null || typeof value !== 'object') return typeof value;
  const className = value.constructor?.name ?? 'Object';
  if (depth >= DEPTH_MAX || Array.isArray(value)) return className;
  const fields = Object.entries(value)
    .filter(([, field]) => typeof field === 'object' || typeof field === 'function')
    .map(([key, field]) => `${key}: ${describeValue(field, names, depth + 1)}`);
  return `${className === 'Object' ? '' : className}{${fields.join(', ')}}`;
}
