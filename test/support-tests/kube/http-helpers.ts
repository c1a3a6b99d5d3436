// Helpers for driving the fake at the HTTP level, below any client: plain requests and raw watches.

import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { COLLECTION } from './client-helpers.js';

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  readonly json: unknown;
}

export interface RawWatch {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly lines: unknown[];
  readonly ended: boolean;
}

export interface HttpClient {
  call(method: string, path: string, body?: unknown, contentType?: string): Promise<Answer>;
  /** Opens a watch and collects raw body text until the server ends it or `stopAfterMs` passes. */
  rawWatch(query: string, stopAfterMs: number): Promise<RawWatch>;
}

/** Requests to the fake at `origin()`, read when each request starts (the fake is started per test). */
export function httpClientFor(origin: () => string): HttpClient {
  return {
    call: (method, path, body, contentType = 'application/json') => call(origin(), method, path, body, contentType),
    rawWatch: (query, stopAfterMs) => rawWatch(origin(), query, stopAfterMs),
  };
}

function call(origin: string, method: string, path: string, body: unknown, contentType: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = httpRequest(
      `${origin}${path}`,
      { method, agent: false, headers: payload === undefined ? {} : { 'content-type': contentType } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error('client timeout')));
    req.end(payload);
  });
}

function rawWatch(origin: string, query: string, stopAfterMs: number): Promise<RawWatch> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}${COLLECTION}?${query}`, { agent: false }, (res) => {
      let text = '';
      let ended = false;
      const finish = (): void => {
        clearTimeout(timer);
        req.destroy();
        const lines = text
          .split('\n')
          .filter((l) => l !== '')
          .map((l): unknown => JSON.parse(l));
        resolve({ status: res.statusCode ?? 0, headers: res.headers, lines, ended });
      };
      const timer = setTimeout(finish, stopAfterMs);
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => {
        ended = true;
        finish();
      });
      res.on('error', () => finish());
    });
    req.on('error', reject);
    req.end();
  });
}

/** A MachineOperation as a test submits it. */
export const op = (name: string, machineRef = 'node-1') => ({
  apiVersion: 'unbounded-cloud.io/v1alpha3',
  kind: 'MachineOperation',
  metadata: { name },
  spec: { machineRef, operationKind: 'AgentUpgrade' },
});
