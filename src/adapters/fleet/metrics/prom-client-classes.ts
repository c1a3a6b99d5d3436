// The four prom-client classes the metrics adapter uses, loaded by their deep paths and typed by
// the package's own declarations. Its public entry also loads the pushgateway, the cluster
// aggregator, the summary's t-digest and, for the default process metrics, @opentelemetry/api:
// about 6 MiB more resident memory than these four, none of it used here. The deep paths are
// allowed because the package declares no `exports` map, and the dependency is pinned exactly,
// so they cannot move under us. Each of these files sets `module.exports` to its class.
//
// The package declares types for its entry only, and TypeScript refuses to declare types for an
// untyped module from inside a module, hence the expected errors: if a release ever ships
// declarations for these paths, the build says so.
import type * as PromClient from 'prom-client';
// @ts-expect-error -- untyped deep path (above); typed by the export below
import counterClass from 'prom-client/lib/counter.js';
// @ts-expect-error -- untyped deep path (above); typed by the export below
import gaugeClass from 'prom-client/lib/gauge.js';
// @ts-expect-error -- untyped deep path (above); typed by the export below
import histogramClass from 'prom-client/lib/histogram.js';
// @ts-expect-error -- untyped deep path (above); typed by the export below
import registryClass from 'prom-client/lib/registry.js';

export const Counter: typeof PromClient.Counter = counterClass;
export type Counter<T extends string = string> = PromClient.Counter<T>;

export const Gauge: typeof PromClient.Gauge = gaugeClass;
export type Gauge<T extends string = string> = PromClient.Gauge<T>;

export const Histogram: typeof PromClient.Histogram = histogramClass;
export type Histogram<T extends string = string> = PromClient.Histogram<T>;

export const Registry: typeof PromClient.Registry = registryClass;
export type Registry = PromClient.Registry;
