/**
 * Polls `probe` until it answers true or `timeoutMs` passed (bounded, I10); returns the last
 * answer. Tests wait on the state they assert about, never on timing alone. Every `pollMs` when
 * given; otherwise the pause grows from 50 ms to 500 ms, so a short wait ends soon and a long
 * one does not spend the suite's CPU on probes (each may be a request to a real API server).
 */
export async function waitFor(
  probe: () => boolean | Promise<boolean>,
  timeoutMs: number,
  pollMs?: number,
): Promise<boolean> {
  const deadlineMs = Date.now() + timeoutMs;
  for (let pauseMs = pollMs ?? 50; ; pauseMs = pollMs ?? Math.min(500, Math.round(pauseMs * 1.5))) {
    if (await probe()) return true;
    if (Date.now() >= deadlineMs) return false;
    await new Promise((done) => setTimeout(done, Math.min(pauseMs, Math.max(1, deadlineMs - Date.now()))));
  }
}
