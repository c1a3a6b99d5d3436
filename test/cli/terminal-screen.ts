/**
 * What a terminal `columns` wide shows after `output`: carriage return, line feed, and erase to
 * the end of the line (ESC [ K) are interpreted; a character written past the last column
 * wraps to a new line, as a terminal does. Lines are returned without trailing spaces.
 */
export function screenAfter(output: string, columns: number): string[] {
  const lines: string[][] = [[]];
  let column = 0;
  const current = (): string[] => lines[lines.length - 1] as string[];
  for (let index = 0; index < output.length; index += 1) {
    const character = output[index] as string;
    if (output.startsWith('\u001b[K', index)) {
      current().length = column;
      index += 2;
    } else if (character === '\r') column = 0;
    else if (character === '\n') {
      lines.push([]);
      column = 0;
    } else {
      if (column === columns) {
        lines.push([]);
        column = 0;
      }
      current()[column] = character;
      column += 1;
    }
  }
  return lines.map((line) =>
    Array.from(line, (character) => character ?? ' ')
      .join('')
      .trimEnd(),
  );
}
