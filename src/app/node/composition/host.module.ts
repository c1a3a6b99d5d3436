import { ContainerModule } from 'inversify';
import { TarGzExtractor } from '../../../adapters/node/archive/tar-gz-extractor.js';
import { LazyArtifactSource } from '../../../adapters/common/http/lazy-artifact-source.js';
import { FlockHostLock } from '../../../adapters/node/lock/flock-host-lock.js';
import { NodeFileSystem } from '../../../adapters/node/host/node-file-system.js';
import { NodeProcessRunner } from '../../../adapters/common/runtime/node-process-runner.js';
import { HostHealthProbe } from '../../../adapters/node/probe/host-health-probe.js';
import { SystemClock } from '../../../adapters/common/runtime/system-clock.js';
import { TufReleaseTrust } from '../../../adapters/common/tuf/tuf-release-trust.js';
import { rerootPath } from '../../../domain/node/layout/posix-path.js';
import { bindBuilt } from '../../common/composition/bind-built.js';
import { Tokens } from '../tokens.js';

/**
 * The real host: node:fs, the system clock, the flock(1) lock, HTTP downloads, child processes,
 * the health probe (exec through the same process runner, HTTP on loopback).
 */
export const hostModule = new ContainerModule(({ bind }) => {
  bind(Tokens.FileSystem).toConstantValue(new NodeFileSystem());
  bind(Tokens.Clock).toConstantValue(new SystemClock());
  bind(Tokens.ArtifactSource).toConstantValue(new LazyArtifactSource());
  bind(Tokens.ArchiveExtractor).toConstantValue(new TarGzExtractor());
  bind(Tokens.ProcessRunner).toConstantValue(new NodeProcessRunner());
  bindBuilt(bind, Tokens.HealthProbe, { runner: Tokens.ProcessRunner }, ({ runner }) => new HostHealthProbe(runner));
  const lock = { layout: Tokens.Layout, identity: Tokens.HostIdentity };
  bindBuilt(bind, Tokens.HostLock, lock, ({ layout, identity }) => {
    return new FlockHostLock(layout.lock, identity.command, { root: layout.root });
  });
  const trust = { config: Tokens.Config, layout: Tokens.Layout, source: Tokens.ArtifactSource, clock: Tokens.Clock };
  bindBuilt(bind, Tokens.ReleaseTrust, trust, ({ config, layout, source, clock }) => {
    if (config.trust === null) return null;
    return new TufReleaseTrust(source, {
      metadataUrl: config.trust.metadataUrl,
      cacheDir: rerootPath(layout.root, config.trust.cacheDir),
      rootFile: rerootPath(layout.root, config.trust.rootFile),
      timeoutMs: config.artifact.timeoutMs,
      idleTimeoutMs: config.artifact.idleTimeoutMs,
      clock,
    });
  });
});
