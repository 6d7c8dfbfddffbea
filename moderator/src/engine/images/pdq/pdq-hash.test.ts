import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { pdqFrequencies, pdqHash } from './pdq-hash';
import type { Pixels } from './pixels';

// ThreatExchange's rule (pdq/README.md): fed the pixel arrays the C++ reference hashes, an implementation gives
// exactly the reference's hash. fixtures/README.md says how reference.json was made.
const fixtures = path.join(__dirname, 'fixtures');
const reference = JSON.parse(readFileSync(path.join(fixtures, 'reference.json'), 'utf8')) as {
  synthetic: Array<{ kind: Kind; width: number; height: number; channels: 1 | 3; seed: number } & Expected>;
  pixels: Array<{ file: string } & Expected>;
};
type Kind = 'pattern' | 'noise' | 'faint' | 'checker' | 'flat' | 'tint';
interface Expected {
  hash: string;
  quality: number;
  /**
   * The reference's 16 × 16 floats behind the bits (hex of their little-endian bytes; empty for an image too small to
   * hash). Equal floats show that every rounding step is the reference's, even where no bit depends on it.
   */
  frequencies: string;
}

/** Hex of the floats' bytes, little-endian as the reference's were printed. */
function hexOf(values: Float32Array): string {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
  return bytes.toString('hex');
}

async function decodedPixels(file: string): Promise<Pixels> {
  // Lossless PNG: sharp gives back the reference's bytes, untouched.
  const { data, info } = await sharp(path.join(fixtures, file)).raw().toBuffer({ resolveWithObject: true });
  expect([1, 3]).toContain(info.channels);
  return { data, width: info.width, height: info.height, channels: info.channels as 1 | 3 };
}

/**
 * The generator of fixtures/make/pdq-reference.cpp, value for value: a xorshift32 stream drawn row by row, pixel by
 * pixel, channel by channel, mixed into gradients and blocks (`pattern`), alone (`noise`), as a one-level ripple
 * (`faint`), or not used: a checkerboard (`checker`), one grey (`flat`), one colour (`tint`, whose luminance in single
 * precision differs from the exact value rounded). `faint`, `flat` and `tint` have only tiny frequencies, which show any
 * rounding not done as the reference does.
 */
function synthetic(kind: Kind, width: number, height: number, channels: 1 | 3, seed: number): Pixels {
  // Signed 32-bit here (same bits as the C++ uint32_t): a local int32 stays unboxed. `floor` is looked up once, as
  // a global's lookup is slow in jest's sandbox.
  const floor = Math.floor;
  let state = (Math.imul(seed, 2654435761) + 1) | 0;
  const data = new Uint8Array(width * height * channels);
  let p = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < channels; c++) {
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        const noise = state;
        if (kind === 'flat') data[p++] = 137;
        else if (kind === 'tint') data[p++] = c === 0 ? 0 : c === 1 ? 11 : 78;
        else if (kind === 'noise') data[p++] = noise & 255;
        else if (kind === 'faint') data[p++] = 120 + (noise & 1);
        else if (kind === 'checker') data[p++] = (floor(x / 3) + floor(y / 3)) & 1 ? 250 : 5;
        else {
          const v =
            floor((x * (97 + 13 * c)) / width) +
            2 * floor((y * (61 + 7 * c)) / height) +
            16 * (floor(x / (1 + floor(width / 8))) ^ floor(y / (1 + floor(height / 8)))) +
            (noise & 63);
          data[p++] = v & 255;
        }
      }
    }
  }
  return { data, width, height, channels };
}

describe('pdqHash', () => {
  it.each(reference.synthetic)(
    'gives the reference hash and quality of a generated $kind array, $width × $height, $channels channel(s)',
    ({ kind, width, height, channels, seed, hash, quality }) => {
      expect(pdqHash(synthetic(kind, width, height, channels, seed))).toEqual({ hash, quality });
    },
  );

  it.each(reference.synthetic.filter((entry) => entry.frequencies !== ''))(
    'computes the reference frequencies of a generated $kind array, $width × $height, $channels channel(s)',
    ({ kind, width, height, channels, seed, frequencies }) => {
      expect(hexOf(pdqFrequencies(synthetic(kind, width, height, channels, seed)).frequencies)).toBe(frequencies);
    },
  );

  it.each(reference.pixels)(
    'gives the reference hash and quality of the pixels it decodes from $from',
    async (entry) => {
      expect(pdqHash(await decodedPixels(entry.file))).toEqual({ hash: entry.hash, quality: entry.quality });
    },
  );

  it.each(reference.pixels)('computes the reference frequencies of the pixels it decodes from $from', async (entry) => {
    expect(hexOf(pdqFrequencies(await decodedPixels(entry.file)).frequencies)).toBe(entry.frequencies);
  });

  it('ignores a fourth (alpha) channel', () => {
    const rgb = synthetic('pattern', 40, 30, 3, 21);
    const rgba = new Uint8Array(40 * 30 * 4);
    for (let i = 0; i < 40 * 30; i++) {
      rgba.set(rgb.data.subarray(i * 3, i * 3 + 3), i * 4);
      rgba[i * 4 + 3] = i & 255;
    }
    expect(pdqHash({ data: rgba, width: 40, height: 30, channels: 4 })).toEqual(pdqHash(rgb));
  });

  it('refuses a buffer shorter than its dimensions', () => {
    expect(() => pdqHash({ data: new Uint8Array(10), width: 8, height: 8, channels: 3 })).toThrow(RangeError);
  });
});
