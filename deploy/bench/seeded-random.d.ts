/** mulberry32: a small seeded generator of numbers in [0, 1) (see seeded-random.js). */
export function random(seed: number): () => number;
