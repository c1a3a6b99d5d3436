/**
 * Polls `probe` every `pollMs` until it answers true or `timeoutMs` passed (bounded, I10);
 * returns the last answer. Tests wait on the state they assert about, never on timing alone.
 */
export async function waitFor(
  probe: () => boolean | Promise<boolean>,
  timeoutMs: number,
  pollMs = 100,
): Promise<boolean> {
  const deadlineMs = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() >= deadlineMs) return false;
    await new Promise((done) => setTimeout(done, pollMs));
  }
}
