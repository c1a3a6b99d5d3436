// Helpers for driving the fake with the real @kubernetes/client-node 1.4.0 client.

import {
  ApiException,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  Watch,
} from '@kubernetes/client-node';

export const GROUP = 'unbounded-cloud.io';
export const VERSION = 'v1alpha3';
export const PLURAL = 'machineoperations';
export const COLLECTION = `/apis/${GROUP}/${VERSION}/${PLURAL}`;
export const coords = { group: GROUP, version: VERSION, plural: PLURAL } as const;

export function kubeConfig(origin: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // skipTLSVerify is required for an http:// server.
    clusters: [{ name: 'fake', server: origin, skipTLSVerify: true }],
    users: [{ name: 'daemon', token: 'test-token' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'daemon' }],
    currentContext: 'fake',
  });
  return kc;
}

export const customObjects = (origin: string): CustomObjectsApi => kubeConfig(origin).makeApiClient(CustomObjectsApi);

/** The options that make a client patch a JSON merge patch (the client's default is JSON Patch). */
export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** An AgentUpgrade MachineOperation for `machineRef`, as the tests create it. */
export const upgrade = (name: string, machineRef: string) => ({
  metadata: { name },
  spec: { machineRef, operationKind: 'AgentUpgrade', parameters: { downloadURL: 'https://example.test/agent.tar.gz' } },
});

export interface Failure {
  readonly code: number;
  /** The parsed Status body (the client hands it over as the raw JSON string). */
  readonly status: { kind?: string; status?: string; reason?: string; code?: number; details?: { name?: string } };
}

/** Awaits a call that must fail with an ApiException and returns its code and parsed body. */
export async function apiFailure(call: Promise<unknown>): Promise<Failure> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    const body: unknown = error.body;
    const status: unknown = typeof body === 'string' ? JSON.parse(body) : body;
    return { code: error.code, status: status as Failure['status'] };
  }
  throw new Error('expected the call to fail');
}

export interface SeenEvent {
  readonly type: string;
  readonly object: {
    kind?: string;
    code?: number;
    reason?: string;
    metadata?: { name?: string; resourceVersion?: string };
    status?: Record<string, unknown>;
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One client Watch, with everything it delivered recorded for assertions. */
export class WatchRecorder {
  readonly events: SeenEvent[] = [];
  doneCalls = 0;
  doneError: unknown = undefined;
  private controller: AbortController | undefined;
  private resolveDone!: (err: unknown) => void;
  /** Resolves with done()'s argument the first time the client calls it. */
  readonly done = new Promise<unknown>((resolve) => (this.resolveDone = resolve));

  static async start(
    origin: string,
    query: Record<string, string | number | boolean | undefined>,
  ): Promise<WatchRecorder> {
    const recorder = new WatchRecorder();
    recorder.controller = await new Watch(kubeConfig(origin)).watch(
      COLLECTION,
      query,
      (type: string, object: SeenEvent['object']) => void recorder.events.push({ type, object }),
      (err: unknown) => {
        recorder.doneCalls += 1;
        recorder.doneError = err;
        recorder.resolveDone(err);
      },
    );
    return recorder;
  }

  /** Event types and object names, the usual thing to assert on (bookmarks left out). */
  summary(): string[] {
    return this.events
      .filter((e) => e.type !== 'BOOKMARK')
      .map((e) => `${e.type} ${e.object.metadata?.name ?? e.object.reason ?? ''}`);
  }

  /** Polls until `predicate` holds, failing after `timeoutMs`. */
  async until(predicate: (events: readonly SeenEvent[]) => boolean, timeoutMs = 3000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.events)) {
      if (Date.now() > deadline) throw new Error(`watch condition not met; saw ${JSON.stringify(this.summary())}`);
      await sleep(10);
    }
  }

  abort(): void {
    this.controller?.abort();
  }
}

/** Fails if `promise` has not settled within `ms` (keeps every wait in a test bounded). */
export async function within<T>(promise: Promise<T>, ms = 3000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `condition` every 10 ms until it holds, failing after `timeoutMs`. */
export async function eventually(condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}
