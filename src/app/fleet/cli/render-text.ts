/** Text helpers of the fleet's commands: statuses are untrusted JSON, shown as printable text. */

export type Json = Readonly<Record<string, unknown>>;

export const record = (value: unknown): Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};

const isControl = (code: number): boolean => code < 0x20 || (code >= 0x7f && code <= 0x9f);

/** Control characters (a terminal escape in a message) are shown as `?`. */
export const printable = (text: string): string =>
  [...text].map((char) => (isControl(char.codePointAt(0) ?? 0) ? '?' : char)).join('');

/** A string or a number as text, `-` for anything else or an empty string. */
export const shown = (value: unknown): string =>
  typeof value === 'string' && value !== '' ? printable(value) : typeof value === 'number' ? String(value) : '-';

/** Rows as columns two spaces apart, each as wide as its widest cell; trailing blanks trimmed. */
export function columns(rows: readonly (readonly string[])[]): string[] {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd((widths[column] ?? 0) + 2))
      .join('')
      .trimEnd(),
  );
}
