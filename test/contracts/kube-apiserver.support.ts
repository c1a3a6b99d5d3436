// What the kube-apiserver conformance suite works with: a target (the fake or the real server)
// that answers requests as the cluster admin or without credentials, and helpers that read
// answers the way a client does (status codes, Status reasons and causes, warnings, watch events),
// never by message text.

import { request as httpRequest } from 'node:http';
import type { KubeRequestOptions, KubeResponse } from '../support/kube/real-apiserver-client.js';

export type { KubeRequestOptions, KubeResponse } from '../support/kube/real-apiserver-client.js';

export const OPS = '/apis/unbounded-cloud.io/v1alpha3/machineoperations';
export const MERGE_PATCH = 'application/merge-patch+json';
export const JSON_PATCH = 'application/json-patch+json';

/** A server under test, reached as the cluster admin, or with no credentials at all. */
export interface KubeTarget {
  /** `fake` or `real`, for the few expectations that name which one answered (never to skip a case). */
  readonly kind: 'fake' | 'real';
  admin(method: string, path: string, options?: KubeRequestOptions): Promise<KubeResponse>;
  anonymous(method: string, path: string): Promise<KubeResponse>;
}

export interface KubeTargetFixture {
  readonly target: KubeTarget;
  stop(): Promise<void>;
}

export interface Operation {
  readonly metadata: {
    readonly name: string;
    readonly resourceVersion: string;
    readonly generation: number;
    readonly uid: string;
    readonly labels?: Record<string, string>;
    readonly finalizers?: string[];
    readonly deletionTimestamp?: string;
  };
  readonly spec: Record<string, unknown>;
  readonly status?: Record<string, unknown>;
}

export interface StatusBody {
  readonly kind: string;
  readonly apiVersion: string;
  readonly status: string;
  readonly reason: string;
  readonly code: number;
  readonly details?: {
    readonly name?: string;
    readonly group?: string;
    readonly kind?: string;
    readonly causes?: readonly { readonly reason?: string; readonly field?: string }[];
    readonly retryAfterSeconds?: number;
  };
}

export interface WatchEvent {
  readonly type: string;
  readonly object: Operation & { readonly kind?: string; readonly code?: number; readonly reason?: string };
}

export const operation = (
  name: string,
  spec: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): object => ({
  apiVersion: 'unbounded-cloud.io/v1alpha3',
  kind: 'MachineOperation',
  metadata: { name },
  spec,
  ...extra,
});

export const upgrade = (machineRef: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  machineRef,
  operationKind: 'AgentUpgrade',
  parameters: { downloadURL: 'https://releases.example.com/agent.tar.gz' },
  ...extra,
});

export const completeCondition = (type: string): Record<string, string> => ({
  type,
  status: 'True',
  reason: 'Succeeded',
  lastTransitionTime: '2024-01-01T00:00:00Z',
});

/** The `299` warning texts of an answer, in the order sent (Node joins repeated headers with ", "). */
export function warningsOf(answer: KubeResponse): string[] {
  const header = answer.headers['warning'];
  const text = Array.isArray(header) ? header.join(', ') : (header ?? '');
  return [...text.matchAll(/299 - "((?:[^"\\]|\\.)*)"/g)].map((match) => (match[1] ?? '').replace(/\\(.)/g, '$1'));
}

/** The causes of a Status as sorted `reason field` strings: the server's order is not part of the contract. */
export function causesOf(answer: KubeResponse): string[] {
  const causes = (answer.json as StatusBody | undefined)?.details?.causes ?? [];
  return causes.map((cause) => `${cause.reason ?? ''} ${cause.field ?? ''}`).sort();
}

/** The Status fields a client reads (everything but the message text). */
export function statusShape(answer: KubeResponse): object {
  const { kind, apiVersion, status, reason, code, details } = answer.json as StatusBody;
  const { causes: _causes, ...rest } = details ?? {};
  return { kind, apiVersion, status, reason, code, details: rest };
}

/** The events of a finished watch response: one JSON object per line. */
export function watchEvents(answer: KubeResponse): WatchEvent[] {
  return answer.text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as WatchEvent);
}

/**
 * What a client learns from a watch that asked for a resourceVersion the server no longer has:
 * the server may say so as HTTP 410 or as an ERROR event carrying Status 410 inside a 200 stream
 * (the watch cache's way); both mean "relist".
 */
export function expiredForClient(answer: KubeResponse): boolean {
  if (answer.status === 410) return true;
  if (answer.status !== 200) return false;
  return watchEvents(answer).some((event) => event.type === 'ERROR' && event.object.code === 410);
}

/** resourceVersions are opaque to clients; the suite compares them only to order events in a test. */
export const rv = (value: { readonly metadata: { readonly resourceVersion: string } }): number =>
  Number(value.metadata.resourceVersion);

/** A plain-HTTP request to the fake, with a bearer token (or none), answered in the real harness's shape. */
export function fakeRequest(
  origin: string,
  token: string | null,
  method: string,
  path: string,
  options: KubeRequestOptions = {},
): Promise<KubeResponse> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const timeoutMs = options.timeoutMs ?? 15_000;
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, origin), {
      method,
      agent: false,
      timeout: timeoutMs,
      headers: {
        accept: 'application/json',
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
        ...(payload === undefined
          ? {}
          : {
              'content-type': options.contentType ?? 'application/json',
              'content-length': Buffer.byteLength(payload),
            }),
      },
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text) as unknown;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.end(payload);
  });
}
