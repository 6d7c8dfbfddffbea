import { addressPolicy } from '@vigil/proto';
import sharp from 'sharp';
import { FONTS } from '../../../deploy/ocr/generate-set';
import { ImageFetcher, type ImageOptions, type OffLoopPool } from '../../src/engine';

// What the tests of the image engine share: its options, and images of text drawn here.

/**
 * The engine's image options as the tests set them (3 images a record, 5 s fetches, a 60 s budget on `model`), with a
 * fetcher of their own that may fetch from loopback unless `allowLoopback` is false; `fetchers` keeps it, to close.
 */
export function imageOptions(
  fetchers: ImageFetcher[],
  model: OffLoopPool,
  { allowLoopback = true, ...overrides }: Partial<ImageOptions> & { allowLoopback?: boolean } = {},
): ImageOptions {
  const fetcher = new ImageFetcher({
    policy: addressPolicy(allowLoopback ? ['127.0.0.0/8'] : []),
    maxBytes: 1024 * 1024,
  });
  fetchers.push(fetcher);
  return {
    fetcher,
    maxPerRecord: 3,
    fetchTimeoutMs: 5000,
    model: { pool: model, budgetMs: 60_000, maxPixels: 40_000_000 },
    ...overrides,
  };
}

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
