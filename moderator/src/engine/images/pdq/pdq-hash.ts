import { dct64To16 } from './dct';
import { jaroszDownsample } from './jarosz';
import { lumaOf, type Pixels } from './pixels';
import { torbenMedian } from './torben';

/** A PDQ hash: 256 bits as 64 lowercase hex digits (the reference's text form), and its quality from 0 to 100. */
export interface PdqHash {
  hash: string;
  quality: number;
}

/** Images narrower or shorter than this get the all-zero hash and quality 0, as in the reference. */
const MIN_SIDE = 5;

/**
 * Meta's PDQ perceptual hash of decoded pixels, as ThreatExchange's C++ reference (pdq/cpp/hashing/pdqhashing.cpp)
 * computes it from a pixel array: one bit per frequency of pdqFrequencies, set when above their median. Given the
 * same pixels, the hash and quality are the reference's exactly (see pdq-hash.test.ts); the reference's file
 * pipeline (decoding, shrinking large images first) is image-hashes.ts.
 */
export function pdqHash(pixels: Pixels): PdqHash {
  if (pixels.width < MIN_SIDE || pixels.height < MIN_SIDE) return { hash: '0'.repeat(64), quality: 0 };
  const { frequencies, quality } = pdqFrequencies(pixels);
  const median = torbenMedian(frequencies);
  const bits = new Uint8Array(256);
  for (let k = 0; k < 256; k++) bits[k] = frequencies[k]! > median ? 1 : 0;
  return { hash: toHex(bits), quality };
}

/**
 * The reference's pdqFloat256FromFloatLuma: luminance, downsampling to 64 × 64, the quality metric on that block,
 * and the 16 × 16 lowest frequencies of its DCT (row-major), each value the reference's to the bit. All zero, and
 * quality 0, for an image too small to hash.
 */
export function pdqFrequencies(pixels: Pixels): { frequencies: Float32Array; quality: number } {
  const { width, height } = pixels;
  if (width < MIN_SIDE || height < MIN_SIDE) return { frequencies: new Float32Array(256), quality: 0 };
  const luma = lumaOf(pixels);
  // A 64 × 64 input is taken as it is (the reference's path for frames already downsampled).
  const block = width === 64 && height === 64 ? luma : jaroszDownsample(luma, height, width, 64, 64);
  return { frequencies: dct64To16(block), quality: qualityOf(block) };
}

/**
 * How much the 64 × 64 block varies: the sum of its significant steps between neighbours (each in whole percent of
 * the full range, truncated), scaled so that 100 means plenty of detail. The reference's heuristic, constants and
 * single-precision steps included.
 */
function qualityOf(block: Float32Array): number {
  const f = Math.fround;
  const step = (u: number, v: number) => Math.abs(Math.trunc(f(f(f(u - v) * 100) / 255)));
  let sum = 0;
  for (let i = 0; i < 63; i++) {
    for (let j = 0; j < 64; j++) sum += step(block[i * 64 + j]!, block[(i + 1) * 64 + j]!);
  }
  for (let i = 0; i < 64; i++) {
    for (let j = 0; j < 63; j++) sum += step(block[i * 64 + j]!, block[i * 64 + j + 1]!);
  }
  return Math.min(100, Math.trunc(sum / 90));
}

/** Bit k (frequency row k / 16, column k % 16) is worth 2^k: the first hex digit holds bits 255 to 252. */
function toHex(bits: Uint8Array): string {
  let hex = '';
  for (let digit = 63; digit >= 0; digit--) {
    const k = digit * 4;
    hex += (bits[k]! | (bits[k + 1]! << 1) | (bits[k + 2]! << 2) | (bits[k + 3]! << 3)).toString(16);
  }
  return hex;
}
