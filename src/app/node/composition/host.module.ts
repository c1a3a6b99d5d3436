import { ContainerModule } from 'inversify';
import { TarGzExtractor } from '../../../adapters/node/archive/tar-gz-extractor.js';
import { LazyArtifactSource } from '../../../adapters/node/http/lazy-artifact-source.js';
import { FlockHostLock } from '../../../adapters/node/lock/flock-host-lock.js';
import { NodeFileSystem } from '../../../adapters/node/host/node-file-system.js';
import { NodeProcessRunner } from '../../../adapters/common/runtime/node-process-runner.js';
import { SystemClock } from '../../../adapters/common/runtime/system-clock.js';
import { bindBuilt } from '../../common/composition/bind-built.js';
import { Tokens } from '../tokens.js';

/** The real host: node:fs, the system clock, the flock(1) lock, HTTP downloads, child processes. */
export const hostModule = new ContainerModule(({ bind }) => {
  bind(Tokens.FileSystem).toConstantValue(new NodeFileSystem());
  bind(Tokens.Clock).toConstantValue(new SystemClock());
  bind(Tokens.ArtifactSource).toConstantValue(new LazyArtifactSource());
  bind(Tokens.ArchiveExtractor).toConstantValue(new TarGzExtractor());
  bind(Tokens.ProcessRunner).toConstantValue(new NodeProcessRunner());
  const lock = { layout: Tokens.Layout, identity: Tokens.HostIdentity };
  bindBuilt(bind, Tokens.HostLock, lock, ({ layout, identity }) => {
    return new FlockHostLock(layout.lock, identity.command, { root: layout.root });
  });
});
