// Messages that name the likely cause of a key that will not load, so a first run fails with a sentence the user can
// act on instead of a generic "could not be read".

/**
 * Why a string did not parse as a PEM public key, when the text shows it: escaped newlines kept literally (a PEM
 * pasted into one line of a .env file), surrounding quotes kept by a loader, or no PEM armour at all.
 */
export function pemHint(text: string): string {
  const hints: string[] = [];
  if (text.includes('\\n')) {
    hints.push(
      'it holds literal "\\n" sequences where the PEM needs line breaks (replace them: value.replace(/\\\\n/g, \'\\n\'))',
    );
  }
  const trimmed = text.trim();
  if (/^["'`]/.test(trimmed) || /["'`]$/.test(trimmed)) {
    hints.push(
      'it is wrapped in quotes, which are part of the value (remove them, or let your .env loader strip them)',
    );
  }
  if (!/-----BEGIN [A-Z ]+-----/.test(text)) {
    hints.push('it has no "-----BEGIN PUBLIC KEY-----" line (a PEM public key or certificate is expected)');
  }
  return hints.length > 0 ? `: ${hints.join('; ')}` : '';
}
