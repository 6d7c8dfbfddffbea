/**
 * Decoded pixels, row-major and interleaved: 1 channel (grey), 2 (grey and alpha), 3 (RGB) or 4 (RGB and alpha).
 * Alpha is ignored, as the reference implementations ignore it.
 */
export interface Pixels {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 1 | 2 | 3 | 4;
}

// ITU-R BT.601 luma weights, held as single-precision floats like the reference's.
const R = Math.fround(0.299);
const G = Math.fround(0.587);
const B = Math.fround(0.114);

/**
 * The luminance of each pixel, row-major. Every sum and product is rounded to single precision as the reference's
 * C++ (`fillFloatLumaFromRGB`) rounds it, so that the hash is bit for bit the reference's.
 */
export function lumaOf(pixels: Pixels): Float32Array {
  const { data, width, height, channels } = pixels;
  const count = width * height;
  if (data.length < count * channels) throw new RangeError('pixel buffer shorter than width × height × channels');
  const luma = new Float32Array(count);
  if (channels <= 2) {
    for (let i = 0, p = 0; i < count; i++, p += channels) luma[i] = data[p]!;
    return luma;
  }
  const f = Math.fround;
  for (let i = 0, p = 0; i < count; i++, p += channels) {
    luma[i] = f(f(R * data[p]!) + f(G * data[p + 1]!)) + f(B * data[p + 2]!);
  }
  return luma;
}
