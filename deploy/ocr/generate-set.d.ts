/** One image of the OCR's labelled set: what it shows and how it is made (see generate-set.js). */
export interface OcrItem {
  id: string;
  lines: string[];
  /** The words of its text that a rule would match. */
  words: string[];
  font: string;
  size: number;
  width: number;
  height: number;
  background: 'photo' | 'white' | 'light' | 'dark' | 'colour';
  style: 'shadow' | 'band' | 'plain';
  rotate: number;
  noisy: boolean;
  seed: number;
  x: number;
  y: number;
  hue: number;
}
export function items(): OcrItem[];
export function render(item: OcrItem): Promise<Buffer>;
export function wordsRead(expected: readonly string[], read: string): string[];
export const FONTS: readonly { name: string; file: string }[];
