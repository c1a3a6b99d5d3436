import { fail, failure, ok, type Result } from '../domain/failure.js';
import { deriveLayout, type SlotLayout } from '../domain/slot-layout.js';
import type { ArchiveExtractor } from '../ports/archive-extractor.js';
import type { ArtifactSource } from '../ports/artifact-source.js';
import type { FileSystem } from '../ports/file-system.js';
import type { HostLock } from '../ports/host-lock.js';
import type { Logger } from '../ports/logger.js';
import type { ServiceManager } from '../ports/service-manager.js';
import { fetchToFile, type FetchReport, type FetchToFileRequest } from './artifact/fetch-to-file.js';
import { createContainer } from './composition/create-container.js';
import type { PortOverrides } from './composition/port-overrides.js';
import type { UpgraderConfig } from './config/upgrader-config.js';
import { raise, runUseCase } from './failure-signal.js';
import type { HostIdentity } from './host-identity.js';
import type { LayoutEngine, MigrationReport, RollbackReport, SwitchReport } from './layout/layout-engine.js';
import { RecordStore } from './record/record-store.js';
import { readStatus, type StatusReport } from './status/read-status.js';
import { Tokens } from './tokens.js';

export interface UpgraderOptions {
  readonly config: UpgraderConfig;
  readonly identity: HostIdentity;
  readonly logger: Logger;
  readonly overrides?: PortOverrides;
}

/**
 * The use cases an operator, the CLI or an embedding agent calls. Every host-changing use case
 * runs under the host lock; every one returns a Result whose failure carries a stable code.
 */
export interface UpgraderParts {
  readonly config: UpgraderConfig;
  readonly layout: SlotLayout;
  readonly identity: HostIdentity;
  readonly logger: Logger;
  readonly fs: FileSystem;
  readonly lock: HostLock;
  readonly services: ServiceManager;
  readonly engine: LayoutEngine;
  readonly source: ArtifactSource;
  readonly extractor: ArchiveExtractor;
}

export class Upgrader {
  readonly config: UpgraderConfig;
  readonly layout: SlotLayout;
  private readonly fs: FileSystem;
  private readonly lock: HostLock;
  private readonly services: ServiceManager;
  private readonly engine: LayoutEngine;

  constructor(private readonly parts: UpgraderParts) {
    this.config = parts.config;
    this.layout = parts.layout;
    this.fs = parts.fs;
    this.lock = parts.lock;
    this.services = parts.services;
    this.engine = parts.engine;
  }

  /** Downloads, verifies and extracts the release's one member to a file (no host change, no lock). */
  fetch(request: FetchToFileRequest): Promise<Result<FetchReport>> {
    return runUseCase(() => {
      const arch = this.parts.identity.arch;
      if (arch === null && request.member === undefined) {
        raise(failure('E_WRONG_ARCH', 'releases are built for amd64 and arm64 only; name the member with --member'));
      }
      return fetchToFile({ ...this.parts, arch: arch ?? 'amd64' }, request);
    });
  }

  status(): Promise<Result<StatusReport>> {
    return runUseCase(() =>
      readStatus({ fs: this.fs, services: this.services, lock: this.lock, layout: this.layout, binaryMaxBytes: this.config.artifact.maxBinaryBytes }),
    );
  }

  migrate(): Promise<Result<MigrationReport>> {
    return this.locked(() => this.engine.migrate());
  }

  rollback(): Promise<Result<RollbackReport>> {
    return this.locked(() => this.engine.rollback());
  }

  /** Installs a staged candidate into the inactive slot and switches to it (no restart). */
  switchTo(candidatePath: string): Promise<Result<SwitchReport>> {
    return this.locked(async () => {
      const record = await new RecordStore(this.fs, this.layout.record).read();
      if (!record.ok) raise(record.failure);
      if (record.value !== null) {
        raise(failure('E_UPGRADE_PENDING', `a managed upgrade record exists at ${this.layout.record}; let the daemon finish it first`));
      }
      return this.engine.switchTo(candidatePath);
    });
  }

  private locked<T>(body: () => Promise<T>): Promise<Result<T>> {
    return runUseCase(async () => {
      const attempt = await this.lock.tryAcquire();
      if (attempt.kind === 'busy') {
        const holder = attempt.holder === null ? 'another process' : `pid ${attempt.holder.pid} (${attempt.holder.command})`;
        raise(failure('E_LOCK_BUSY', `the host lock ${this.layout.lock} is held by ${holder}`));
      }
      try {
        return await body();
      } finally {
        await attempt.lease.release();
      }
    });
  }
}

/** Builds an Upgrader from a resolved configuration and optional port overrides. */
export function createUpgrader(options: UpgraderOptions): Result<Upgrader> {
  const { config } = options;
  const layout = deriveLayout({ root: config.root, agentName: config.agent.name, ...config.paths });
  if (!layout.ok) return fail('E_CONFIG', layout.failure.message);
  const container = createContainer({
    config,
    layout: layout.value,
    identity: options.identity,
    logger: options.overrides?.logger ?? options.logger,
    overrides: options.overrides ?? {},
  });
  const get = container;
  return ok(
    new Upgrader({
      config,
      layout: layout.value,
      identity: options.identity,
      logger: get.get(Tokens.Logger),
      fs: get.get(Tokens.FileSystem),
      lock: get.get(Tokens.HostLock),
      services: get.get(Tokens.ServiceManager),
      engine: get.get(Tokens.LayoutEngine),
      source: get.get(Tokens.ArtifactSource),
      extractor: get.get(Tokens.ArchiveExtractor),
    }),
  );
}
