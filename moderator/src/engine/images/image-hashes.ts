import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { pdqHash, type PdqHash } from './pdq/pdq-hash';
import type { Pixels } from './pdq/pixels';

/** Why an image has no PDQ hash: a bounded set (metric label). Its byte digests are always given. */
type PdqFailure = 'too_many_pixels' | 'undecodable';

/**
 * The hashes hash banks match an image by: MD5 and SHA-256 of its bytes (hex), and its PDQ hash, or why it has none.
 */
export type ImageHashes = { md5: string; sha256: string } & ({ pdq: PdqHash } | { pdq: null; failure: PdqFailure });

/** The reference's file pipeline shrinks an image larger than this, on either side, to this square first. */
const REFERENCE_SIDE = 512;

/**
 * Hashes one image's bytes. The PDQ hash follows the reference's pdq-photo-hasher (pdqHash256FromFile): the first
 * frame decoded as stored (EXIF orientation is not applied, as the reference does not), an image larger than
 * 512 pixels on either side sampled to 512 × 512 by nearest neighbour (CImg's resize, aspect ratio not kept), then
 * pdqHash on its RGB or grey pixels. Synchronous CPU work: run it off the event loop (engine/hash-worker.ts).
 */
export async function imageHashes(bytes: Uint8Array, options: { maxPixels: number }): Promise<ImageHashes> {
  const md5 = createHash('md5').update(bytes).digest('hex');
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  let pixels: Pixels;
  try {
    pixels = await decode(bytes, options.maxPixels);
  } catch (err) {
    const message = err instanceof Error ? err.message : '';
    return { md5, sha256, pdq: null, failure: /pixel limit/i.test(message) ? 'too_many_pixels' : 'undecodable' };
  }
  return { md5, sha256, pdq: pdqHash(referenceSize(pixels)) };
}

/**
 * 8-bit pixels of the first frame: grey for a greyscale image (the reference hashes its single channel as it is),
 * sRGB otherwise (CMYK and other spaces converted), alpha dropped.
 */
async function decode(bytes: Uint8Array, maxPixels: number): Promise<Pixels> {
  const image = sharp(bytes, { limitInputPixels: maxPixels, failOn: 'error' });
  const { space } = await image.metadata();
  const grey = space === 'b-w' || space === 'grey16';
  const { data, info } = await image
    .removeAlpha()
    .toColourspace(grey ? 'b-w' : 'srgb')
    .raw({ depth: 'uchar' })
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 1 && info.channels !== 3) throw new Error(`unexpected ${info.channels} channels`);
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/**
 * CImg's nearest-neighbour resize to 512 × 512 as the reference applies it: output column x takes input column
 * ⌊x · width / 512⌋ (rows alike). Sampled here from the full decode, because libvips' nearest neighbour picks other
 * pixels (and shrink-on-load averages them), which would move the hash away from the reference's.
 */
function referenceSize(pixels: Pixels): Pixels {
  const { data, width, height, channels } = pixels;
  if (width <= REFERENCE_SIDE && height <= REFERENCE_SIDE) return pixels;
  const out = new Uint8Array(REFERENCE_SIDE * REFERENCE_SIDE * channels);
  for (let y = 0; y < REFERENCE_SIDE; y++) {
    const row = Math.floor((y * height) / REFERENCE_SIDE) * width;
    for (let x = 0; x < REFERENCE_SIDE; x++) {
      const from = (row + Math.floor((x * width) / REFERENCE_SIDE)) * channels;
      const to = (y * REFERENCE_SIDE + x) * channels;
      for (let c = 0; c < channels; c++) out[to + c] = data[from + c]!;
    }
  }
  return { data: out, width: REFERENCE_SIDE, height: REFERENCE_SIDE, channels };
}
