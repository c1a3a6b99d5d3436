/** The longest duration a clock reading shows; longer ones are "more than" it. */
export const CLOCK_TEXT_MAX_SECONDS = 100 * 3600 - 1;

/**
 * Whole seconds as a clock reads them: "0:42", "10:00", "1:02:03". The caller rounds (an ETA up,
 * so it never says done early; elapsed time down); a negative or non-finite value reads "0:00",
 * and anything past 99:59:59 reads ">99:59:59" so a stalled transfer cannot widen the line.
 */
export function formatClockTime(seconds: number): string {
  const whole = Number.isFinite(seconds) && seconds > 0 ? Math.floor(seconds) : 0;
  const capped = Math.min(whole, CLOCK_TEXT_MAX_SECONDS);
  const hours = Math.floor(capped / 3600);
  const minutes = Math.floor((capped % 3600) / 60);
  const secs = String(capped % 60).padStart(2, '0');
  const text = hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${secs}` : `${minutes}:${secs}`;
  return whole > CLOCK_TEXT_MAX_SECONDS ? `>${text}` : text;
}
