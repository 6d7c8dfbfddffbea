import path from 'node:path';
import sharp from 'sharp';
import { createWorker, OEM, PSM, type Worker } from 'tesseract.js';

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
   * sharp (refused before decoding when its header announces more than `maxPixels`), made grey and scaled into
   * OCR_MAX_PIXELS (or up, when small), and read twice: as it is (a page), and as ink where it departs from its
   * surroundings (see localInk; sparse text), for text over a photo, which tesseract's own thresholding loses among the
   * picture's shapes. The second reading adds the words the first did not find.
   */
  async read(bytes: Uint8Array, maxPixels: number): Promise<ReadResult> {
    let grey: { data: Buffer; width: number; height: number };
    try {
      const image = sharp(bytes, { limitInputPixels: maxPixels, failOn: 'error' });
      const { width = 0, height = 0 } = await image.metadata();
      if (width === 0 || height === 0) return { failure: 'undecodable' };
      const scale = scaleFor(width, height);
      const { data, info } = await image
        .resize(Math.max(1, Math.round(width * scale)), Math.max(1, Math.round(height * scale)), { fit: 'fill' })
        .flatten({ background: '#ffffff' })
        .grayscale()
        .extractChannel(0)
        .raw()
        .toBuffer({ resolveWithObject: true });
      grey = { data, width: info.width, height: info.height };
    } catch (err) {
      const message = err instanceof Error ? err.message : '';
      return { failure: /pixel limit/i.test(message) ? 'too_many_pixels' : 'undecodable' };
    }
    const worker = await this.start();
    // Each reading straightens the page first by the skew tesseract finds (`rotateAuto`): tilted text read far worse.
    await worker.setParameters({ tessedit_pageseg_mode: PSM.AUTO });
    const asIs = cleanText((await worker.recognize(await png(grey), { rotateAuto: true })).data.text);
    // The ink is scattered text without a page's layout: read as sparse text.
    await worker.setParameters({ tessedit_pageseg_mode: PSM.SPARSE_TEXT });
    const ink = cleanText((await worker.recognize(await png(await localInk(grey)), { rotateAuto: true })).data.text);
    return { text: mergeReadings(asIs, ink) };
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await (await worker).terminate();
  }
}

type Grey = { data: Buffer; width: number; height: number };

/** A grey image as an uncompressed PNG, which tesseract.js reads. */
function png({ data, width, height }: Grey): Promise<Buffer> {
  return sharp(data, { raw: { width, height, channels: 1 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

/** Grey levels a pixel must depart from its surroundings' mean by to be ink (text is lighter or darker than them). */
const INK_CONTRAST = 40;

/**
 * Black where a pixel departs from the mean of its surroundings (a Gaussian of sigma 15 px) by more than INK_CONTRAST,
 * lighter or darker, white elsewhere: light and dark text alike become dark on white, and the smooth shapes of a
 * photo behind it white.
 */
export async function localInk(grey: Grey): Promise<Grey> {
  const { data, width, height } = grey;
  const mean = await sharp(data, { raw: { width, height, channels: 1 } })
    .blur(15)
    .extractChannel(0)
    .raw()
    .toBuffer();
  const ink = Buffer.alloc(data.length);
  for (let i = 0; i < data.length; i += 1) ink[i] = Math.abs((data[i] ?? 0) - (mean[i] ?? 0)) > INK_CONTRAST ? 0 : 255;
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

/** Whitespace collapsed to single spaces (lines become one field's words), trimmed, at most MAX_TEXT_CHARS. */
export function cleanText(text: string): string {
  return text.replace(/\s+/gu, ' ').trim().slice(0, MAX_TEXT_CHARS);
}
