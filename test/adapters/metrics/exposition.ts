/**
 * A tiny reader of the Prometheus text exposition format, enough for the metrics tests: samples
 * (`name{label="value",…} number`), comments skipped, label values unescaped.
 */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g;

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(LABEL_PAIR)) {
      labels[pair[1] ?? ''] = (pair[2] ?? '').replace(/\\(.)/g, (_, escaped: string) =>
        escaped === 'n' ? '\n' : escaped,
      );
    }
    samples.push({ name: match[1] ?? '', labels, value: parseValue(match[3] ?? '') });
  }
  return samples;
}

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

/** The samples of one metric whose labels include `labels`. */
export function samplesOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

/** The value of the one sample with exactly these labels; undefined when there is none. */
export function valueOf(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const wanted = Object.keys(labels).length;
  const found = samplesOf(samples, name, labels).filter((sample) => Object.keys(sample.labels).length === wanted);
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} with ${JSON.stringify(labels)}`);
  return found[0]?.value;
}
