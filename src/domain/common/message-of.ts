/** What a caught value says: an Error's message, anything else as text (a throw may throw anything). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
