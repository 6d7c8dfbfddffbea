import { isDuplicateKeyError } from './store-errors';
import { upsertRetried } from './upsert';

const duplicate = () => Object.assign(new Error('E11000 duplicate key error'), { code: 11000 });

describe('upsertRetried', () => {
  it('tries an upsert that lost the race to insert the same _id once more', async () => {
    const outcomes: Array<() => Promise<string>> = [
      () => Promise.reject(duplicate()),
      () => Promise.resolve('updated'),
    ];
    let calls = 0;
    await expect(upsertRetried(() => outcomes[calls++]!())).resolves.toBe('updated');
    expect(calls).toBe(2);
  });

  it('does not try again after any other error, nor a third time', async () => {
    let calls = 0;
    const other = new Error('connection reset');
    await expect(upsertRetried(() => (calls++, Promise.reject(other)))).rejects.toBe(other);
    expect(calls).toBe(1);

    calls = 0;
    await expect(upsertRetried(() => (calls++, Promise.reject(duplicate())))).rejects.toMatchObject({ code: 11000 });
    expect(calls).toBe(2);
  });

  it('knows a duplicate key by its code only', () => {
    expect(isDuplicateKeyError(duplicate())).toBe(true);
    expect(isDuplicateKeyError({ code: 11001 })).toBe(false);
    expect(isDuplicateKeyError(null)).toBe(false);
    expect(isDuplicateKeyError('E11000')).toBe(false);
  });
});
