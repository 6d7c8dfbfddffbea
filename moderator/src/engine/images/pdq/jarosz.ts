/**
 * The reference's downsampling (ThreatExchange pdq/cpp/downscaling): two passes of box filters along rows then
 * columns (a Jarosz tent filter), then one sample at the centre of each output cell. Single-precision arithmetic
 * throughout (sums, quotients), in the reference's order, so the result is the reference's to the bit.
 */
export function jaroszDownsample(luma: Float32Array, rows: number, cols: number, outRows: number, outCols: number) {
  const windowAlongRows = windowSize(cols, outCols);
  const windowAlongCols = windowSize(rows, outRows);
  const buffer1 = Float32Array.from(luma);
  const buffer2 = new Float32Array(rows * cols);
  for (let pass = 0; pass < 2; pass++) {
    for (let i = 0; i < rows; i++) box1d(buffer1, buffer2, i * cols, cols, 1, windowAlongRows);
    for (let j = 0; j < cols; j++) box1d(buffer2, buffer1, j, rows, cols, windowAlongCols);
  }
  return decimate(buffer1, rows, cols, outRows, outCols);
}

/** Half of one output cell per pass, rounded up: two passes then cover the whole cell. */
function windowSize(oldDimension: number, newDimension: number): number {
  return Math.floor((oldDimension + 2 * newDimension - 1) / (2 * newDimension));
}

/** A centred box filter of `window` samples along one line, narrower where the line begins and ends. */
function box1d(
  input: Float32Array,
  output: Float32Array,
  start: number,
  length: number,
  stride: number,
  window: number,
) {
  const f = Math.fround;
  const half = Math.floor((window + 2) / 2);
  const phase1 = half - 1;
  const phase2 = window - half + 1;
  const phase3 = length - window;
  const phase4 = half - 1;
  let li = start;
  let ri = start;
  let oi = start;
  let sum = 0;
  let size = 0;
  for (let i = 0; i < phase1; i++, ri += stride) {
    sum = f(sum + input[ri]!);
    size++;
  }
  for (let i = 0; i < phase2; i++, ri += stride, oi += stride) {
    sum = f(sum + input[ri]!);
    size++;
    output[oi] = sum / size;
  }
  for (let i = 0; i < phase3; i++, li += stride, ri += stride, oi += stride) {
    sum = f(sum + input[ri]!);
    sum = f(sum - input[li]!);
    output[oi] = sum / size;
  }
  for (let i = 0; i < phase4; i++, li += stride, oi += stride) {
    sum = f(sum - input[li]!);
    size--;
    output[oi] = sum / size;
  }
}

function decimate(input: Float32Array, rows: number, cols: number, outRows: number, outCols: number): Float32Array {
  const out = new Float32Array(outRows * outCols);
  for (let i = 0; i < outRows; i++) {
    const row = Math.trunc(((i + 0.5) * rows) / outRows);
    for (let j = 0; j < outCols; j++) {
      out[i * outCols + j] = input[row * cols + Math.trunc(((j + 0.5) * cols) / outCols)]!;
    }
  }
  return out;
}
