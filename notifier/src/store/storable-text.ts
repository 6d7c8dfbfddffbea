/**
 * Text that came from outside (a webhook receiver's answer, the Transparency Database's messages) as the store can
 * hold it: PostgreSQL, under FerretDB, refuses any string with a NUL character (SQLSTATE 22P05), and so the whole
 * document that carries it. NULs are dropped; the rest is kept as it came.
 */
export function storableText(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '') : text;
}
