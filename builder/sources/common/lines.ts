/** Line-oriented reading shared by the text feed parsers. */

/**
 * Calls `visit` for every line of `text` with its 1-based number. Handles `\n` and `\r\n`,
 * and a last line without a newline (Cloudflare serves its lists that way). A final
 * newline does not produce an extra empty line.
 */
export function forEachLine(text: string, visit: (line: string, lineNumber: number) => void): void {
  let start = 0;
  let lineNumber = 0;
  const length = text.length;
  while (start < length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = length;
    lineNumber++;
    const stop = end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end;
    visit(text.slice(start, stop), lineNumber);
    start = end + 1;
  }
}

/** True for a line that carries no data: empty, only whitespace, or a `#` comment. */
export function isBlankOrComment(line: string): boolean {
  const trimmed = line.trim();
  return trimmed === '' || trimmed.startsWith('#');
}

/** `value` quoted for a message, shortened so one bad row cannot flood a report. */
export function quote(value: string, max = 80): string {
  const shown = value.length > max ? `${value.slice(0, max)}…` : value;
  return JSON.stringify(shown);
}
