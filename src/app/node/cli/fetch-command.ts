import { resolve } from 'node:path';
import { Command, Option } from 'clipanion';
import { SystemClock } from '../../../adapters/common/runtime/system-clock.js';
import { BaseCommand } from './base-command.js';
import { interruptedExitCode } from '../../common/cli/interrupt-exit.js';
import { clockTicker, ProgressBar } from './progress-bar.js';

/** A terminal's progress bar paces its redraws and its rate on real time. */
const CLOCK = new SystemClock();

export class FetchCommand extends BaseCommand {
  static override paths = [['fetch']];

  static override usage = Command.Usage({
    description: 'Download a release archive, verify it and extract its one binary to a file.',
    details: `
      Streams the archive from the URL (http or https; redirects are followed up to 10 times and
      never from https to http), hashes the compressed bytes as they arrive, and accepts only a
      gzip-compressed tar holding exactly one regular file named the architecture's member
      (\`aks-flex-node-linux-amd64\` or \`-arm64\`, or the one given with \`--member\`). The binary
      is written next to the output file and renamed into place only after the whole archive and
      the digest were verified: on any failure the output file is not created (or keeps its old
      content) and no temp file remains. Without a digest, or over plain http, a warning is
      logged. \`fetch\` takes no lock, so an output that is, or reaches through \`..\` or
      symlinks, a file the upgrader manages (a slot or anything else in the slot directory, the
      current and last-good links, the entry, the record, the state files) is refused.

      URLs are printed without their query string, fragment or user information. On a terminal
      (not with \`--json\`) a progress bar fitted to its width shows the bytes so far out of the
      total (B, KiB, MiB or GiB) and, after the first second, the rate and the time left; without
      a Content-Length, the bytes and the rate. SIGINT, SIGTERM or SIGHUP stop the download,
      remove the temp file and fail with E_INTERRUPTED. Exit codes: 0 fetched, 1 failed with
      nothing written, 2 invalid input, 128 + the signal's number when a signal stopped it (130
      SIGINT, 143 SIGTERM, 129 SIGHUP), with nothing written.
    `,
    examples: [
      [
        'Fetch and verify a release',
        '$0 fetch --url https://example.com/aks-flex-node-linux-amd64.tar.gz --sha256 0123…cdef --output /tmp/candidate',
      ],
      [
        'Name the member explicitly and print JSON',
        '$0 fetch --url https://example.com/agent.tar.gz --member my-agent --output /tmp/my-agent --json',
      ],
    ],
  });

  url = Option.String('--url', { required: true, description: 'Release archive URL (http or https)' });
  sha256 = Option.String('--sha256', {
    description: 'Expected SHA-256 of the compressed archive (64 hex characters, optional sha256: prefix)',
  });
  member = Option.String('--member', {
    description: 'Archive member to extract (default: from agent.member for this architecture)',
  });
  output = Option.String('--output', { required: true, description: 'File to write the binary to' });

  override async execute(): Promise<number> {
    const upgrader = await this.openUpgrader();
    if (!upgrader.ok) return this.failWith(upgrader.failure);
    const stderr = this.context.stderr as NodeJS.WriteStream;
    const { report, signal } = await this.interruptible(async (signal) => {
      const progress =
        !this.json && stderr.isTTY === true
          ? new ProgressBar(stderr, () => CLOCK.monotonicMs(), signal, clockTicker(CLOCK))
          : null;
      try {
        const fetched = await upgrader.value.fetch({
          url: this.url,
          sha256: this.sha256,
          member: this.member,
          output: resolve(this.output),
          ...(signal === undefined ? {} : { signal }),
          ...(progress === null
            ? {}
            : { onProgress: (bytes: number, total: number | null) => progress.update(bytes, total) }),
        });
        return { report: fetched, signal };
      } finally {
        progress?.finish();
      }
    });
    if (!report.ok) {
      const exitCode = this.failWith(report.failure);
      return interruptedExitCode(signal, report.failure) ?? exitCode;
    }
    const { value } = report;
    return this.succeed({ fetch: value }, [
      `Fetched ${value.member} to ${value.output} (${value.binaryBytes} bytes).`,
      `Archive ${value.url}: ${value.archive.bytes} bytes, sha256:${value.archive.sha256}${value.digestVerified ? ' (verified)' : ' (no digest given: not verified)'}.`,
    ]);
  }
}
