import sharp from 'sharp';
import { FONTS } from '../../../deploy/ocr/generate-set';

/** Where the text stands on its image, and in what colours and font (a name of deploy/ocr's fonts from npm). */
export interface TextLayout {
  width: number;
  height: number;
  left: number;
  top: number;
  ink: string;
  background: string;
  /** Default: the first font of the set (Roboto). */
  font?: string;
}

/** A PNG of `text` (Pango markup; lines split by `\n`) at 40 px in `ink` over a plain `background`. */
export async function textImage(text: string, layout: TextLayout): Promise<Buffer> {
  const font = FONTS.find((candidate) => candidate.name === layout.font) ?? FONTS[0];
  if (!font) throw new Error('no font');
  const rendered = await sharp({
    text: {
      text: `<span foreground="${layout.ink}">${text}</span>`,
      font: `${font.name} 40px`,
      fontfile: font.file,
      rgba: true,
    },
  })
    .png()
    .toBuffer();
  const { width, height, background, left, top } = layout;
  return sharp({ create: { width, height, channels: 3, background } })
    .composite([{ input: rendered, left, top }])
    .png()
    .toBuffer();
}
