import { ArtifactError } from '../../../domain/common/port-errors.js';
import { parseDownloadUrl } from '../../../domain/common/url-policy.js';
import type { QueryResult } from '../../../domain/fleet/order/snapshot.js';
import type { ArtifactSource } from '../../../ports/common/artifact-source.js';
import type { InstantQuery, MetricsQuery } from '../../../ports/fleet/metrics-query.js';

/** An instant query's answer is a few samples; anything near this is a query that selects too much. */
export const ANSWER_BYTES_MAX = 1 << 20;

/**
 * Instant queries (`GET <address>/api/v1/query?query=…`) over the project's hardened HTTP (the
 * ArtifactSource: redirects checked hop by hop, TLS verified, proxy variables, time limits, URLs
 * redacted in every message). Only a 200 answer whose `data` is an instant vector or a scalar is
 * a result; its sample values are numbers, `NaN` and `±Inf` included.
 */
export class PrometheusQuery implements MetricsQuery {
  constructor(private readonly source: ArtifactSource) {}

  async instant(request: InstantQuery): Promise<QueryResult> {
    const base = request.address.replace(/\/+$/, '');
    const url = parseDownloadUrl(
      `${base}/api/v1/query?query=${encodeURIComponent(request.query)}`,
      { allowHttp: true, requireDigest: false },
      true,
    );
    if (!url.ok) return { ok: false, code: url.failure.code, message: url.failure.message };
    try {
      const stream = await this.source.open({
        url: url.value.url,
        maxBytes: ANSWER_BYTES_MAX,
        timeoutMs: request.timeoutMs,
        idleTimeoutMs: request.timeoutMs,
        ...(request.signal === undefined ? {} : { signal: request.signal }),
      });
      const text = await readCapped(stream.body);
      if (text === null) return answerProblem(`the answer is larger than ${ANSWER_BYTES_MAX} bytes`);
      return readAnswer(text);
    } catch (error) {
      if (error instanceof ArtifactError) return { ok: false, code: error.code, message: error.message };
      throw error;
    }
  }
}

async function readCapped(body: AsyncIterable<Uint8Array>): Promise<string | null> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of body) {
    length += chunk.length;
    if (length > ANSWER_BYTES_MAX) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function answerProblem(message: string): QueryResult {
  return { ok: false, code: 'E_QUERY_ANSWER', message };
}

/** `{status: "success", data: {resultType, result}}`, as the API documents it. */
export function readAnswer(text: string): QueryResult {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return answerProblem('the answer is not JSON');
  }
  const record = isRecord(answer) ? answer : {};
  if (record['status'] !== 'success') {
    const why = typeof record['error'] === 'string' ? record['error'].slice(0, 200) : 'no reason given';
    return answerProblem(`the server answered an error: ${why}`);
  }
  const data = isRecord(record['data']) ? record['data'] : {};
  const result = data['result'];
  if (data['resultType'] === 'scalar') {
    const value = sampleValue(result);
    return value === null ? answerProblem('the scalar is malformed') : { ok: true, values: [value] };
  }
  if (data['resultType'] !== 'vector' || !Array.isArray(result))
    return answerProblem(
      `a ${String(data['resultType'])} result cannot be judged: ask for an instant vector or a scalar`,
    );
  const values: number[] = [];
  for (const sample of result) {
    const value = isRecord(sample) ? sampleValue(sample['value']) : null;
    if (value === null) return answerProblem('a sample of the vector is malformed');
    values.push(value);
  }
  return { ok: true, values };
}

/** `[<unix time>, "<value>"]`; Prometheus writes infinities as `+Inf` and `-Inf`. */
function sampleValue(pair: unknown): number | null {
  if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[1] !== 'string') return null;
  const text = pair[1];
  if (text === '+Inf' || text === 'Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  const value = Number(text);
  return text.trim() === '' || Number.isNaN(value) ? null : value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
