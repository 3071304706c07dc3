/**
 * Syntax check of a header line (renderingOptions.header) at intake. The contract's
 * placeholders (docs.retarus.com/fax/headers): %Y %y %m %b %B %d %a %A %H %M %S %P %R %T %K %%
 * %I %p %# %z %Z %c %r %C %n, and %tz=<zone> / %l=<lang> (value ends at the next space or ";").
 * "Standalone percent signs are not allowed": any other character after "%", or "%" at the end,
 * is rejected with 400 when the job is created.
 */
const SIMPLE = new Set("YymbBdaAHMSPRTK%Ip#zZcrCn".split(""));

export function findHeaderError(header: string): string | null {
  for (let i = 0; i < header.length; i++) {
    if (header[i] !== "%") continue;
    const next = header[i + 1];
    if (next === undefined) return `a standalone "%" ends the header; write "%%" for a percent sign`;
    if (SIMPLE.has(next)) {
      i++;
      continue;
    }
    const rest = header.slice(i + 1);
    const valued = /^(tz|l)=([^\s;]+);?/.exec(rest);
    if (valued) {
      i += valued[0].length;
      continue;
    }
    return `"%${next}" at position ${i + 1} is not a header placeholder; write "%%" for a percent sign`;
  }
  return null;
}
