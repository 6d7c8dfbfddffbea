import { transparencyWritesOf } from './transparency-counter';

describe('transparencyWritesOf', () => {
  it('merges counts per document of this writer: one per tenant and day, `$inc` by dotted path, zero sums left out', () => {
    const writes = transparencyWritesOf(
      [
        {
          tenantId: 'ten_a',
          counts: [
            { day: '2026-03-01', path: ['reviews', 'confirmed'], by: 1 },
            { day: '2026-03-01', path: ['reviews', 'reviewed'], by: 1 },
          ],
        },
        {
          tenantId: 'ten_a',
          counts: [
            { day: '2026-03-01', path: ['reviews', 'confirmed'], by: -1 },
            { day: '2026-03-01', path: ['reviews', 'overturned'], by: 1 },
            { day: '2026-03-02', path: ['reversals', 'manual'], by: 1 },
          ],
        },
        { tenantId: 'ten_b', counts: [{ day: '2026-03-01', path: ['complaints', 'received', 'appeal'], by: 1 }] },
        // Counts that cancel out write nothing.
        {
          tenantId: 'ten_c',
          counts: [
            { day: '2026-03-01', path: ['reviews', 'confirmed'], by: 1 },
            { day: '2026-03-01', path: ['reviews', 'confirmed'], by: -1 },
          ],
        },
      ],
      'w1',
    );
    expect(writes).toEqual([
      {
        _id: 'ten_a|2026-03-01|w1',
        inc: { 'counts.reviews.reviewed': 1, 'counts.reviews.overturned': 1 },
        setOnInsert: { tenantId: 'ten_a', day: '2026-03-01', month: 'ten_a|2026-03' },
      },
      {
        _id: 'ten_a|2026-03-02|w1',
        inc: { 'counts.reversals.manual': 1 },
        setOnInsert: { tenantId: 'ten_a', day: '2026-03-02', month: 'ten_a|2026-03' },
      },
      {
        _id: 'ten_b|2026-03-01|w1',
        inc: { 'counts.complaints.received.appeal': 1 },
        setOnInsert: { tenantId: 'ten_b', day: '2026-03-01', month: 'ten_b|2026-03' },
      },
    ]);
  });
});
