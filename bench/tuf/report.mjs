// bench/tuf's tables: plain columns on a terminal, Markdown with --markdown.

/** The targets: TUF at most 5% slower and 10 MiB larger than the baseline; one request when nothing is new. */
const WALL_RATIO_TARGET = 1.05;
const RSS_DIFFERENCE_TARGET_MIB = 10;
const NOTHING_NEW_REQUESTS_TARGET = 1;

export function renderReport(rows, { rounds, markdown, cores }) {
  const date = new Date().toISOString().slice(0, 10);
  const tables = [sideBySide, nothingNew, refreshAlone, requests].map((columns) => {
    const [headers, cells] = columns();
    return table(headers, rows.map(cells), markdown).join('\n');
  });
  const header = `TUF benchmark: ${rounds} rounds, medians; node ${process.version}; ${cores} cores; ${date}`;
  return `${[header, ...tables, rows.map(verdict).join('\n')].join('\n\n')}\n`;
}

/** Each table: its headers, and a row's cells. */
const sideBySide = () => [
  [
    'archive',
    'baseline: fetch --sha256',
    'RSS',
    'TUF: fetch, first refresh',
    'RSS',
    'wall-time ratio',
    'paired by round (range)',
    'RSS difference',
    'metadata requests, first refresh',
    'metadata requests, nothing new (fetch)',
  ],
  (row) => [
    megabytes(row),
    seconds(row.plain.seconds),
    mebibytes(row.plain.rssMiB),
    seconds(row.tuf.seconds),
    mebibytes(row.tuf.rssMiB),
    ratio(row.tuf.seconds / row.plain.seconds),
    pairedRatio(row.tuf.paired),
    difference(row.tuf.rssMiB - row.plain.rssMiB),
    String(row.firstRefresh.count),
    String(row.nothingNew.count),
  ],
];

const nothingNew = () => [
  ['archive', 'TUF: fetch, nothing new', 'RSS', 'wall-time ratio', 'paired by round (range)', 'RSS difference'],
  (row) => [
    megabytes(row),
    seconds(row.warm.seconds),
    mebibytes(row.warm.rssMiB),
    ratio(row.warm.seconds / row.plain.seconds),
    pairedRatio(row.warm.paired),
    difference(row.warm.rssMiB - row.plain.rssMiB),
  ],
];

const refreshAlone = () => [
  [
    'archive',
    'first refresh alone (in-process)',
    'share of the baseline',
    'nothing new, same instance (as a daemon)',
    'share of the baseline',
  ],
  (row) => [
    megabytes(row),
    milliseconds(row.alone.firstMs),
    share(row.alone.firstMs, row.plain.seconds),
    milliseconds(row.alone.nothingNewMs),
    share(row.alone.nothingNewMs, row.plain.seconds),
  ],
];

const requests = () => [
  [
    'archive',
    'metadata requests: first refresh',
    'nothing new, new process (fetch)',
    'nothing new, same instance (as a daemon)',
  ],
  (row) => [
    megabytes(row),
    requestList(row.firstRefresh),
    requestList(row.nothingNew),
    requestList(row.alone.nothingNewRequests),
  ],
];

/** Against the targets, for the reader: the script reports, it does not fail on a ratio. */
function verdict(row) {
  const wall = row.tuf.seconds / row.plain.seconds;
  const rss = row.tuf.rssMiB - row.plain.rssMiB;
  const { count } = row.nothingNew;
  const daemon = row.alone.nothingNewRequests.count;
  const met = (ok) => (ok ? 'met' : 'MISSED');
  return [
    `${megabytes(row)}:`,
    `wall ${ratio(wall)} (≤ ${ratio(WALL_RATIO_TARGET)}: ${met(wall <= WALL_RATIO_TARGET)});`,
    `RSS ${difference(rss)} (≤ +${RSS_DIFFERENCE_TARGET_MIB} MiB: ${met(rss <= RSS_DIFFERENCE_TARGET_MIB)});`,
    `refresh with nothing new: ${count} metadata requests in a new process`,
    `(≤ ${NOTHING_NEW_REQUESTS_TARGET}: ${met(count <= NOTHING_NEW_REQUESTS_TARGET)}),`,
    `${daemon} in the same one (${met(daemon <= NOTHING_NEW_REQUESTS_TARGET)});`,
    `CPU (user + system) baseline ${seconds(row.plain.cpuSeconds)}, TUF ${seconds(row.tuf.cpuSeconds)},`,
    `nothing new ${seconds(row.warm.cpuSeconds)}`,
  ].join(' ');
}

function table(headers, rows, markdown) {
  if (markdown) {
    const line = (cells) => `| ${cells.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`;
    return [line(headers), `|${headers.map(() => '---').join('|')}|`, ...rows.map(line)];
  }
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => row[column].length)));
  const line = (cells) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)];
}

/** `GET /metadata/2.root.json 404` → `2.root.json (404)`, in the order of the count's keys. */
function requestList(requests) {
  if (requests.count === 0) return 'none';
  return `${requests.count}: ${requests.paths
    .map((key) => {
      const [, path, status, times] = key.split(' ');
      return `${path.replace('/metadata/', '')} (${status})${times === undefined ? '' : ` ${times}`}`;
    })
    .join(', ')}`;
}

const megabytes = (row) => `${(row.archiveBytes / 1e6).toFixed(0)} MB`;
const seconds = (value) => `${value.toFixed(2)} s`;
const mebibytes = (value) => `${value.toFixed(1)} MiB`;
const milliseconds = (value) => `${value.toFixed(0)} ms`;
const share = (ms, baselineSeconds) => `${((ms / 1000 / baselineSeconds) * 100).toFixed(1)}%`;
const pairedRatio = (paired) => `${ratio(paired.median)} (${ratio(paired.min)}–${ratio(paired.max)})`;
const ratio = (value) => `${value.toFixed(3)}×`;
const difference = (value) => {
  const tenths = Math.round(value * 10) / 10;
  return `${tenths < 0 ? '−' : '+'}${Math.abs(tenths).toFixed(1)} MiB`;
};
