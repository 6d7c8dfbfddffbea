/**
 * Maps `items` through `work`, at most `limit` at a time, and answers the results in the items' order. Every item is
 * worked even when one fails; then the first failure is thrown.
 */
export async function mapInTurns<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  const errors: unknown[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      try {
        results[index] = await work(items[index]!);
      } catch (err) {
        errors.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  if (errors.length > 0) throw errors[0];
  return results;
}
