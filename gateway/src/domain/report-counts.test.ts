import type { CountTree } from '@vigil/proto';
import { flattenCounts, medianOfBuckets } from './report-counts';

describe('time buckets and their median', () => {
  it('takes the middle value, or the mean of the two middle values', () => {
    expect(medianOfBuckets(new Map())).toBeNull();
    expect(medianOfBuckets(new Map([['t5', 1]]))).toBe(5);
    expect(
      medianOfBuckets(
        new Map([
          ['t100', 1],
          ['t5', 2],
        ]),
      ),
    ).toBe(5);
    expect(
      medianOfBuckets(
        new Map([
          ['t100', 1],
          ['t5', 1],
        ]),
      ),
    ).toBe(52.5);
    expect(
      medianOfBuckets(
        new Map([
          ['t1', 2],
          ['t3', 0],
          ['t9', 2],
        ]),
      ),
    ).toBe(5);
  });

  it('sums trees of counters by dotted path', () => {
    const a: CountTree = { notices: { received: { user: 2 } }, reviews: { confirmed: 1 } };
    const b: CountTree = { notices: { received: { user: 3, trusted_flagger: 1 } } };
    const flat = flattenCounts(b, flattenCounts(a));
    expect(Object.fromEntries(flat)).toEqual({
      'notices.received.user': 5,
      'notices.received.trusted_flagger': 1,
      'reviews.confirmed': 1,
    });
  });
});
