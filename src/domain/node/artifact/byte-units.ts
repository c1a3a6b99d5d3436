/** One mebibyte: size limits are configured in whole MiB and shown in MiB. */
export const MIB = 1024 * 1024;

/**
 * The binary units a size is shown in, smallest first, with how many decimals each keeps. A
 * release binary is tens to hundreds of MiB, so a tenth of a KiB or MiB moves visibly during a
 * download; a tenth of a GiB is 100 MiB, so GiB keep two decimals to go on moving.
 */
const UNITS: readonly { readonly name: string; readonly bytes: number; readonly decimals: number }[] = [
  { name: 'B', bytes: 1, decimals: 0 },
  { name: 'KiB', bytes: 1024, decimals: 1 },
  { name: 'MiB', bytes: MIB, decimals: 1 },
  { name: 'GiB', bytes: 1024 * MIB, decimals: 2 },
];

type Unit = (typeof UNITS)[number];

/** A byte count as a display can take it: a non-negative finite number (anything else is 0). */
function sane(bytes: number): number {
  return Number.isFinite(bytes) && bytes > 0 ? bytes : 0;
}

/**
 * The unit `bytes` reads best in: the next unit up once this one would show 1024 or more, judged
 * after rounding, so 1 MiB − 1 byte reads "1.0 MiB" rather than "1024.0 KiB".
 */
function unitFor(bytes: number): Unit {
  let index = 0;
  while (index < UNITS.length - 1 && Number(inUnit(bytes, UNITS[index] as Unit)) >= 1024) index += 1;
  return UNITS[index] as Unit;
}

function inUnit(bytes: number, unit: Unit): string {
  return (bytes / unit.bytes).toFixed(unit.decimals);
}

/** A size in B, KiB, MiB or GiB, whichever it reads best in: "1023 B", "12.3 KiB", "1.20 GiB". */
export function formatBytes(bytes: number): string {
  const value = sane(bytes);
  const unit = unitFor(value);
  return `${inUnit(value, unit)} ${unit.name}`;
}

/**
 * Done out of total, both in the total's unit so the two figures compare at a glance:
 * "0.5/4.0 MiB", "300/1023 B".
 */
export function formatByteFraction(doneBytes: number, totalBytes: number): string {
  const total = sane(totalBytes);
  const unit = unitFor(total);
  return `${inUnit(sane(doneBytes), unit)}/${inUnit(total, unit)} ${unit.name}`;
}

/** A transfer rate: "3.4 MiB/s", "512 B/s". */
export function formatByteRate(bytesPerSecond: number): string {
  return `${formatBytes(bytesPerSecond)}/s`;
}
