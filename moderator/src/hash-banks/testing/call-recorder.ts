// For specs: fake use-case methods that note each call (its method's name, then its arguments) in `calls` and answer
// their `result` (`defaultResult` unless given).

export function callRecorder(defaultResult: unknown) {
  const calls: unknown[][] = [];
  const record =
    (name: string, result: unknown = defaultResult) =>
    (...args: unknown[]) => {
      calls.push([name, ...args]);
      return Promise.resolve(result);
    };
  return { calls, record };
}
