/** When the stream does not say how wide it is (not a terminal after all). */
export const DEFAULT_COLUMNS = 80;

/**
 * How many characters a transient line may use on a terminal `columns` wide: one less than the
 * width, since writing the last column makes many terminals wrap, and every redraw would then
 * stack a new line.
 */
export function roomIn(columns: number | undefined): number {
  const usable =
    typeof columns === 'number' && Number.isFinite(columns) && columns >= 1 ? Math.floor(columns) : DEFAULT_COLUMNS;
  return Math.max(1, usable - 1);
}

/** As many of `words` as fit in `room`, from the first; cut when even the first does not fit. */
export function fitWords(words: readonly string[], room: number): string {
  let text = '';
  for (const word of words.filter((part) => part !== '')) {
    const next = text === '' ? word : `${text} ${word}`;
    if (next.length > room) break;
    text = next;
  }
  return text === '' ? (words.find((part) => part !== '') ?? '').slice(0, room) : text;
}
