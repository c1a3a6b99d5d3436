import { Container } from 'inversify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NodeProcessRunner } from '../../../src/adapters/common/runtime/node-process-runner.js';
import { SystemClock } from '../../../src/adapters/common/runtime/system-clock.js';
import { kubernetesClusterModule } from '../../../src/app/node/composition/cluster-platform.module.js';
import { FLEX_PROFILE } from '../../../src/app/node/config/profiles.js';
import { type UpgraderConfig } from '../../../src/app/node/config/upgrader-config.js';
import { Tokens } from '../../../src/app/node/tokens.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/kube/fake-apiserver.js';
import { writeKubeconfig } from '../../support/kube/machine-operations.js';
import { makeScratch } from '../../support/real-tree.js';
import { RecordingLogger } from '../../support/recording-logger.js';
import { waitFor } from '../../support/wait-for.js';

// The host name as some systems report it: with capitals, which a Node name never has.
vi.mock('node:os', async (importOriginal) => ({
  ...(await importOriginal<typeof import('node:os')>()),
  hostname: () => 'Flex-Node-07.Example',
}));

describe('the kubernetes cluster platform', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let api: FakeApiServer;
  let stop: AbortController;
  beforeEach(async () => {
    scratch = makeScratch();
    stop = new AbortController();
    api = await startFakeApiServer({ bookmarkIntervalMs: 200 });
  });
  afterEach(async () => {
    stop.abort();
    await api.close();
    scratch.cleanup();
  });

  it('answers to the lower-cased host name by default, as the kubelet names its Node', async () => {
    const config: UpgraderConfig = {
      ...FLEX_PROFILE,
      cluster: { ...FLEX_PROFILE.cluster, kubeconfig: writeKubeconfig(scratch.root, api.origin) },
    };
    const container = new Container({ defaultScope: 'Singleton' });
    container.bind(Tokens.Config).toConstantValue(config);
    container.bind(Tokens.Clock).toConstantValue(new SystemClock());
    container.bind(Tokens.Logger).toConstantValue(new RecordingLogger());
    container.bind(Tokens.ProcessRunner).toConstantValue(new NodeProcessRunner());
    container.load(kubernetesClusterModule);
    const store = await container.get(Tokens.OperationStoreFactory)();
    void store.watch(stop.signal)[Symbol.asyncIterator]().next();
    const selectors = () => api.requests.map((request) => request.query['fieldSelector']);
    expect(await waitFor(() => selectors().includes('spec.machineRef=flex-node-07.example'), 10_000)).toBe(true);
    expect(selectors().some((selector) => selector?.includes('Flex') === true)).toBe(false);
  });
});
