// bench/tuf's command line, and its refusals before anything was started.
import { hasTool } from '../common/measure.mjs';

export function parseArguments(argv) {
  const parsed = { sizes: [200], rounds: 3, markdown: false, verbose: false };
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index];
    const value = argv[index + 1];
    if (flag === '--markdown' || flag === '--verbose') {
      parsed[flag.slice(2)] = true;
      continue;
    }
    if (flag === '--sizes' && value !== undefined) parsed.sizes = value.split(',').map(Number);
    else if (flag === '--rounds' && value !== undefined) parsed.rounds = Number(value);
    else exit(`unknown argument ${flag} (--sizes MB,MB… --rounds N --markdown --verbose)`);
    index += 1;
  }
  // 256 MB: the default artifact.maxArchiveBytes is 256 MiB, and the archive is a little larger than its member.
  if (parsed.sizes.some((size) => !(Number.isInteger(size) && size > 0 && size <= 256)))
    exit('sizes must be whole MB, 1..256');
  if (!(Number.isInteger(parsed.rounds) && parsed.rounds >= 1 && parsed.rounds <= 20)) exit('rounds must be 1..20');
  return parsed;
}

export function requireTool(tool) {
  if (!hasTool(tool)) exit(`${tool} is needed (Debian: apt-get install -y time tar gzip)`);
}

/** Before anything was started. */
export function exit(message) {
  process.stderr.write(`bench/tuf: ${message}\n`);
  process.exit(1);
}
