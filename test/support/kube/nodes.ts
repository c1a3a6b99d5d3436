// Nodes, as far as the fake models them: metadata only (name, uid, resourceVersion,
// creationTimestamp, labels, annotations), with every change an event in the Node watch log.
// Tests set and delete them through the test API; over HTTP they are listed and watched like any
// collection, read, created by POST and deleted (as an admin would), and their labels and
// annotations merge-patched (as a kubelet identity patches its own Node), with an optional
// metadata.resourceVersion precondition. A Node body with a spec or status is refused: the fake
// would not keep them. For the same reason a field selector may name metadata.name only (a real
// server also takes spec.unschedulable; the fake answers it 400).

import type { KubeRequest } from './faults.js';
import { deepEqual, isJsonObject, type JsonObject, parseJson } from './json.js';
import { decodeMetadata, metadataCauses, stringMap } from './metadata.js';
import type { ObjectCollection } from './object-collection.js';
import { alreadyExists, conflict, NODES, notFound } from './resources.js';
import { fail, invalid } from './status.js';
import type { Node } from './types.js';
import { jsonBody, MERGE_PATCH, mediaType } from './writes.js';

export class NodeStore {
  constructor(
    readonly objects: ObjectCollection<Node>,
    private readonly now: () => string,
    private readonly newUid: () => string,
  ) {}

  get(name: string): Node | undefined {
    return this.objects.get(name);
  }

  require(name: string): Node {
    const node = this.objects.get(name);
    if (node === undefined) throw notFound(NODES, name);
    return node;
  }

  /** Creates or replaces `name` with exactly these labels and annotations (ADDED or MODIFIED). */
  set(name: string, labels: Readonly<Record<string, string>>, annotations?: Readonly<Record<string, string>>): Node {
    const previous = this.objects.get(name);
    const node: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        uid: previous?.metadata.uid ?? this.newUid(),
        resourceVersion: '',
        creationTimestamp: previous?.metadata.creationTimestamp ?? this.now(),
        labels: { ...labels },
        ...(annotations === undefined ? {} : { annotations: { ...annotations } }),
      },
    };
    return previous === undefined
      ? this.objects.commit('ADDED', node)
      : this.objects.commit('MODIFIED', node, previous);
  }

  delete(name: string): Node {
    return this.objects.commit('DELETED', structuredClone(this.require(name)));
  }

  /** The POST of a Node: 409 when it exists, 422 for a bad name, labels or annotations. */
  create(req: KubeRequest): Node {
    const body = jsonBody(req, NODES);
    for (const [key, value] of Object.entries(body))
      if ((key === 'spec' || key === 'status') && !(isJsonObject(value) && Object.keys(value).length === 0))
        throw fail(400, `the fake API server keeps only the metadata of a Node, not its ${key}`, 'BadRequest');
    const { metadata } = decodeMetadata(body['metadata']);
    const name = typeof metadata['name'] === 'string' ? metadata['name'] : '';
    if (name === '')
      throw invalid(NODES, undefined, [
        {
          reason: 'FieldValueRequired',
          message: 'Required value: name or generateName is required',
          field: 'metadata.name',
        },
      ]);
    const causes = metadataCauses(metadata);
    if (causes.length > 0) throw invalid(NODES, name, causes);
    if (this.objects.get(name) !== undefined) throw alreadyExists(NODES, name);
    return this.set(
      name,
      stringMap(metadata['labels'], 'metadata.labels') ?? {},
      stringMap(metadata['annotations'], 'metadata.annotations'),
    );
  }

  /** A merge patch of labels and annotations (a null value removes one); no change is not persisted. */
  patch(name: string, req: KubeRequest): Node {
    const node = this.require(name);
    const { labels, annotations, precondition } = nodePatch(req);
    if (precondition !== undefined && precondition !== node.metadata.resourceVersion) throw conflict(NODES, name);
    const next: Node = structuredClone(node);
    next.metadata.labels = merged(node.metadata.labels, labels);
    next.metadata.annotations = merged(node.metadata.annotations, annotations);
    if (Object.keys(next.metadata.annotations).length === 0) delete next.metadata.annotations;
    const causes = metadataCauses(next.metadata as unknown as JsonObject);
    if (causes.length > 0) throw invalid(NODES, name, causes);
    if (deepEqual(next as unknown as JsonObject, node as unknown as JsonObject)) return node;
    return this.objects.commit('MODIFIED', next, node);
  }
}

function merged(
  current: Readonly<Record<string, string>> | undefined,
  patch: Readonly<Record<string, string | null>>,
): Record<string, string> {
  const result: Record<string, string> = { ...(current ?? {}) };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = value;
  }
  return result;
}

interface NodePatch {
  readonly labels: Readonly<Record<string, string | null>>;
  readonly annotations: Readonly<Record<string, string | null>>;
  readonly precondition: string | undefined;
}

function nullableStrings(value: unknown, field: string): Record<string, string | null> {
  if (value === undefined || value === null) return {};
  if (!isJsonObject(value) || !Object.values(value).every((v) => v === null || typeof v === 'string'))
    throw fail(400, `${field} must be a map of strings`, 'BadRequest');
  return value as Record<string, string | null>;
}

/** The daemon's version report and similar: a merge patch of `metadata.labels` and `metadata.annotations` only. */
function nodePatch(req: KubeRequest): NodePatch {
  if (mediaType(req) !== MERGE_PATCH)
    throw fail(415, 'the body of the request was in an unknown format', 'UnsupportedMediaType');
  const patch = parseJson(req.body ?? '');
  if (!isJsonObject(patch)) throw fail(400, 'error decoding patch: the body is not a JSON object', 'BadRequest');
  const metadata = isJsonObject(patch['metadata']) ? patch['metadata'] : {};
  const allowed = new Set(['labels', 'annotations', 'resourceVersion']);
  if (Object.keys(patch).some((key) => key !== 'metadata') || Object.keys(metadata).some((key) => !allowed.has(key)))
    throw fail(
      422,
      'the fake accepts only metadata.labels, metadata.annotations and metadata.resourceVersion in a Node patch',
      'Invalid',
    );
  const precondition = metadata['resourceVersion'];
  return {
    labels: nullableStrings(metadata['labels'], 'metadata.labels'),
    annotations: nullableStrings(metadata['annotations'], 'metadata.annotations'),
    precondition: typeof precondition === 'string' && precondition !== '' ? precondition : undefined,
  };
}
