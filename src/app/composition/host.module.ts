import { ContainerModule } from 'inversify';
import { FlockHostLock } from '../../adapters/lock/flock-host-lock.js';
import { NodeFileSystem } from '../../adapters/node/node-file-system.js';
import { SystemClock } from '../../adapters/node/system-clock.js';
import type { SlotLayout } from '../../domain/slot-layout.js';
import type { HostIdentity } from '../host-identity.js';
import { Tokens } from '../tokens.js';
import type { PortOverrides } from './port-overrides.js';

/** The real host — node:fs, the system clock, the flock(1) lock — unless an embedder overrides a port. */
export function hostModule(overrides: PortOverrides): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind(Tokens.FileSystem).toConstantValue(overrides.fileSystem ?? new NodeFileSystem());
    bind(Tokens.Clock).toConstantValue(overrides.clock ?? new SystemClock());
    const lock = overrides.hostLock;
    if (lock !== undefined) bind(Tokens.HostLock).toConstantValue(lock);
    else {
      bind(Tokens.HostLock)
        .toResolvedValue((layout: SlotLayout, identity: HostIdentity) => new FlockHostLock(layout.lock, identity.command), [Tokens.Layout, Tokens.HostIdentity])
        .inSingletonScope();
    }
  });
}
