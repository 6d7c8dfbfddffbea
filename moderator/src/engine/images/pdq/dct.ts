/**
 * Rows 1 to 16 of the 64-point DCT-II basis (row 0, the mean, is left out), 16 × 64 row-major, each entry rounded
 * to single precision as the reference's table is.
 */
const BASIS = (() => {
  const scale = Math.fround(Math.sqrt(2 / 64));
  const basis = new Float32Array(16 * 64);
  for (let i = 0; i < 16; i++) {
    for (let j = 0; j < 64; j++) basis[i * 64 + j] = scale * Math.cos((Math.PI / 2 / 64) * (i + 1) * (2 * j + 1));
  }
  return basis;
})();

/**
 * The 16 × 16 lowest frequencies (but the mean) of the 2D DCT of a 64 × 64 block: B = D A Dᵀ. Products and sums in
 * single precision, each sum in the reference's order (k from 0 to 63), so that each value is the reference's.
 */
export function dct64To16(block: Float32Array): Float32Array {
  const f = Math.fround;
  const t = new Float32Array(16 * 64);
  for (let i = 0; i < 16; i++) {
    for (let j = 0; j < 64; j++) {
      let sum = 0;
      for (let k = 0; k < 64; k++) sum = f(sum + f(BASIS[i * 64 + k]! * block[k * 64 + j]!));
      t[i * 64 + j] = sum;
    }
  }
  const out = new Float32Array(16 * 16);
  for (let i = 0; i < 16; i++) {
    for (let j = 0; j < 16; j++) {
      let sum = 0;
      for (let k = 0; k < 64; k++) sum = f(sum + f(t[i * 64 + k]! * BASIS[j * 64 + k]!));
      out[i * 16 + j] = sum;
    }
  }
  return out;
}
