/**
 * Guards on configuration text that the schema cannot express: characters that would change
 * the meaning of a systemd unit, a shell script or a path once rendered, and nesting deep
 * enough to exhaust the stack of a recursive validator.
 */

/**
 * C0 controls (tab, LF and CR included), DEL and the C1 range: the Unicode category Cc. A line
 * break in a unit value starts a new directive, systemd drops or rewrites others, and none of
 * them has a legitimate use in an argument, a unit name or a path. Tabs are refused too: they
 * survive quoting but a path or an argument containing one is almost certainly a mistake nobody
 * would notice.
 */
const CONTROL_CHARACTER = /\p{Cc}/u;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The configuration is three levels deep (`agent.args[i]`); anything far deeper is hostile. */
export const CONFIG_NESTING_MAX = 16;

/** Refused as well: a lone surrogate is written out as U+FFFD, silently changing the value. */
export function isPlainText(value: string): boolean {
  return !CONTROL_CHARACTER.test(value) && !LONE_SURROGATE.test(value);
}

/**
 * True when `text` nests arrays or objects deeper than `maximum`, found by one linear scan
 * before the text is parsed: validators and error formatters recurse over parsed values, so a
 * deep document must be refused before any of them sees it.
 */
export function nestsDeeperThan(text: string, maximum: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 0x5c)
        index += 1; // a backslash escapes the next character, a quote included
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) {
      inString = true;
    } else if (char === 0x7b || char === 0x5b) {
      depth += 1;
      if (depth > maximum) return true;
    } else if (char === 0x7d || char === 0x5d) {
      depth -= 1;
    }
  }
  return false;
}

/**
 * The JSON value of a configuration file's text, or why it is refused as a whole (nested too
 * deep for the checks that walk it, or not JSON): the step before any key is checked.
 */
export function configJson(
  text: string,
): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problem: string } {
  if (nestsDeeperThan(text, CONFIG_NESTING_MAX))
    return { ok: false, problem: `arrays or objects nest deeper than ${CONFIG_NESTING_MAX} levels` };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, problem: 'not valid JSON' };
  }
}
