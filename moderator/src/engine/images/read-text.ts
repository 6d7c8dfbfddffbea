import path from 'node:path';
import sharp from 'sharp';
import { createWorker, OEM, PSM, type Worker } from 'tesseract.js';
import { textLayout, type Grey } from './text-layout';

/** Characters of read text kept per image: enough for any caption or flyer, bounded for the rules and the store. */
export const MAX_TEXT_CHARS = 2000;

/**
 * Pixels an image is scaled down to before OCR at most: tesseract's WebAssembly memory grows with the image it reads
 * (about 4 bytes a pixel several times over), so this bounds it, while text still legible at this size is kept.
 */
export const OCR_MAX_PIXELS = 4_000_000;

/** Images whose shorter side is below this are scaled up first: tesseract reads letters under ~20 px high poorly. */
const SMALL_SIDE = 400;

export type ReadResult = { text: string } | { failure: 'too_many_pixels' | 'undecodable' };

/**
 * The English model of `@tesseract.js-data/eng` ("best int": LSTM with integer weights, 2.9 MB gzipped), from the
 * package's files: nothing is downloaded.
 */
function englishModelPath(): string {
  return path.join(path.dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
}

/**
 * Reads the text in images with tesseract.js (its WebAssembly build, from `tesseract.js-core`, in one worker thread
 * of its own started by this reader) and the English model from its npm package: offline, nothing cached on disk.
 * The tesseract worker starts with `ready` or on the first read (about 0.5 s, 130 MB). One read at a time: the caller
 * (one image thread) sends one image after another.
 */
export class TextReader {
  private worker?: Promise<Worker>;

  private start(): Promise<Worker> {
    this.worker ??= (async () => {
      const worker = await createWorker('eng', OEM.LSTM_ONLY, {
        langPath: englishModelPath(),
        gzip: true,
        cacheMethod: 'none',
        logger: () => undefined,
        errorHandler: () => undefined,
      });
      // A fixed resolution (images carry none that means anything), and tesseract's notes to a file of nothing: the
      // service's output is JSON logs only.
      await worker.setParameters({ user_defined_dpi: '300', tessedit_pageseg_mode: PSM.AUTO, debug_file: '/dev/null' });
      return worker;
    })();
    // A failed start is tried again by the next read.
    this.worker.catch(() => {
      this.worker = undefined;
    });
    return this.worker;
  }

  /** Loads the model now rather than on the first read, and reads once (a first reading is several times slower). */
  async ready(): Promise<void> {
    const worker = await this.start();
    const blank = await sharp({ create: { width: 64, height: 32, channels: 3, background: '#ffffff' } })
      .png()
      .toBuffer();
    await worker.recognize(blank);
  }

  /**
   * The text in one image (its first frame), whitespace collapsed, at most MAX_TEXT_CHARS. The image is decoded by
   * sharp (refused before decoding when its header announces more than `maxPixels`), made grey, cleared of grain (a
   * 3 × 3 median) and scaled into OCR_MAX_PIXELS (or up, when small). Its ink (see localInk) gives the text's tilt and
   * line height (see textLayout); small text is scaled up again to lines of TEXT_LINE_PX. Then it is read twice, each
   * time turned level by that tilt: as it is (a page), and as ink (sparse text), for text over a photo, which
   * tesseract's own thresholding loses among the picture's shapes. The second reading adds the words the first did not
   * find.
   */
  async read(bytes: Uint8Array, maxPixels: number): Promise<ReadResult> {
    let grey: Grey;
    let ink: Grey;
    let tiltDeg: number;
    try {
      const image = sharp(bytes, { limitInputPixels: maxPixels, failOn: 'error' });
      const { width = 0, height = 0 } = await image.metadata();
      if (width === 0 || height === 0) return { failure: 'undecodable' };
      const clean = await image
        .flatten({ background: '#ffffff' })
        .grayscale()
        .extractChannel(0)
        .raw()
        .toBuffer({ resolveWithObject: true });
      const original: Grey = { data: clean.data, width: clean.info.width, height: clean.info.height };
      const scale = scaleFor(width, height);
      grey = await scaled(original, scale);
      ink = await localInk(grey);
      const layout = textLayout(ink);
      tiltDeg = layout.tiltDeg;
      const up = upscaleFor(layout.lineHeight, grey.width, grey.height);
      if (up > 1) {
        grey = await scaled(original, scale * up);
        ink = await localInk(grey);
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : '';
      return { failure: /pixel limit/i.test(message) ? 'too_many_pixels' : 'undecodable' };
    }
    const worker = await this.start();
    // tesseract turns the image by the angle given before it reads: the text's tilt undone.
    const level = { rotateRadians: (-tiltDeg * Math.PI) / 180 };
    await worker.setParameters({ tessedit_pageseg_mode: PSM.AUTO });
    const asIs = cleanText((await worker.recognize(await png(grey), level)).data.text);
    // The ink is scattered text without a page's layout: read as sparse text.
    await worker.setParameters({ tessedit_pageseg_mode: PSM.SPARSE_TEXT });
    const inked = cleanText((await worker.recognize(await png(ink), level)).data.text);
    return { text: mergeReadings(asIs, inked) };
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await (await worker).terminate();
  }
}

/** The grey image cleared of grain (a 3 × 3 median, which keeps strokes' edges) and scaled by `scale`. */
async function scaled({ data, width, height }: Grey, scale: number): Promise<Grey> {
  const out = await sharp(data, { raw: { width, height, channels: 1 } })
    .median(3)
    .resize(Math.max(1, Math.round(width * scale)), Math.max(1, Math.round(height * scale)), { fit: 'fill' })
    .extractChannel(0)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data: out.data, width: out.info.width, height: out.info.height };
}

/** A grey image as an uncompressed PNG, which tesseract.js reads. */
function png({ data, width, height }: Grey): Promise<Buffer> {
  return sharp(data, { raw: { width, height, channels: 1 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

/** Grey levels a pixel must depart from its surroundings' mean by to be ink (text is lighter or darker than them). */
const INK_CONTRAST = 40;

/** How far the surroundings of a pixel reach (the sigma of a Gaussian, pixels): wider than a bold stroke. */
const SURROUNDINGS_SIGMA = 25;

/**
 * The text's ink, black on white: the pixels that depart from the mean of their surroundings by more than
 * INK_CONTRAST, on the side where the image departs most (light text over a photo, or dark text on a light band).
 * Light and dark text alike become dark on white, the smooth shapes of a photo behind it white, and so do the dark
 * fringes that light text leaves in its surroundings' mean (and a shadow beside it).
 */
export async function localInk(grey: Grey): Promise<Grey> {
  const { data, width, height } = grey;
  const mean = await sharp(data, { raw: { width, height, channels: 1 } })
    .blur(SURROUNDINGS_SIGMA)
    .extractChannel(0)
    .raw()
    .toBuffer();
  let lighter = 0;
  let darker = 0;
  for (let i = 0; i < data.length; i += 1) {
    const departs = (data[i] ?? 0) - (mean[i] ?? 0);
    if (departs > INK_CONTRAST) lighter += departs - INK_CONTRAST;
    else if (departs < -INK_CONTRAST) darker += -departs - INK_CONTRAST;
  }
  const side = lighter >= darker ? 1 : -1;
  const ink = Buffer.alloc(data.length);
  for (let i = 0; i < data.length; i += 1) {
    ink[i] = side * ((data[i] ?? 0) - (mean[i] ?? 0)) > INK_CONTRAST ? 0 : 255;
  }
  return { data: ink, width, height };
}

/** The first reading, then the words of the second that it lacks (case folded), in their order. */
export function mergeReadings(first: string, second: string): string {
  const known = new Set(first.toLowerCase().split(' '));
  const added = second.split(' ').filter((word) => word.length > 0 && !known.has(word.toLowerCase()));
  return cleanText([first, ...added].join(' '));
}

/** The factor an image of this size is scaled by before OCR: down into OCR_MAX_PIXELS, up to a SMALL_SIDE. */
export function scaleFor(width: number, height: number): number {
  const down = Math.sqrt(OCR_MAX_PIXELS / (width * height));
  if (down < 1) return down;
  const shorter = Math.min(width, height);
  if (shorter >= SMALL_SIDE) return 1;
  return Math.min(SMALL_SIDE / shorter, down, 4);
}

/** Lines of text this high (pixels) read well; smaller ones are scaled up to it, at most twice. */
export const TEXT_LINE_PX = 32;

/**
 * How much more an image whose lines of ink are `lineHeight` high is scaled up: to TEXT_LINE_PX, at most 2 and within
 * OCR_MAX_PIXELS; 1 when no line was found, the lines are high enough or the gain too small to pay for.
 */
export function upscaleFor(lineHeight: number, width: number, height: number): number {
  if (lineHeight <= 0 || lineHeight >= TEXT_LINE_PX) return 1;
  const up = Math.min(2, TEXT_LINE_PX / lineHeight, Math.sqrt(OCR_MAX_PIXELS / (width * height)));
  return up > 1.15 ? up : 1;
}

/** Whitespace collapsed to single spaces (lines become one field's words), trimmed, at most MAX_TEXT_CHARS. */
export function cleanText(text: string): string {
  return text.replace(/\s+/gu, ' ').trim().slice(0, MAX_TEXT_CHARS);
}
