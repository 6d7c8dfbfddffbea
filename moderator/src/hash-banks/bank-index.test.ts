import { BankIndex, type BankInfo } from './bank-index';

const pdqA = 'f'.repeat(64);
/** pdqA with its first `bits` bits cleared (each hex digit 0 clears four). */
const near = (bits: number): string => {
  const digits = pdqA.split('');
  for (let bit = 0; bit < bits; bit++) {
    const at = bit >> 2;
    digits[at] = (Number.parseInt(digits[at]!, 16) & ~(8 >> (bit & 3))).toString(16);
  }
  return digits.join('');
};

function bank(id: string, fields: Partial<BankInfo> = {}): BankInfo {
  return { id, name: id, kind: 'pdq', distance: 31, negative: false, enabled: true, action: 'flag', ...fields };
}

describe('BankIndex', () => {
  it.each([
    [30, 31, true],
    [31, 31, true],
    [32, 31, false],
    [0, 0, true],
    [1, 0, false],
    [10, 10, true],
    [11, 10, false],
  ])('a PDQ hash %i bits away with the bank distance %i matches: %s', (bits, distance, matches) => {
    const index = new BankIndex();
    index.putBank(bank('b1', { distance }));
    index.putHash({ id: 'h1', bankId: 'b1', value: pdqA });
    const outcome = index.match({ pdq: near(bits) });
    expect(outcome.matches.map((hit) => [hit.hashId, hit.distance])).toEqual(matches ? [['h1', bits]] : []);
  });

  it('applies each bank its own distance', () => {
    const index = new BankIndex();
    index.putBank(bank('strict', { distance: 8 }));
    index.putBank(bank('loose', { distance: 40 }));
    index.putHash({ id: 's', bankId: 'strict', value: pdqA });
    index.putHash({ id: 'l', bankId: 'loose', value: pdqA });
    expect(index.match({ pdq: near(20) }).matches.map((hit) => hit.bank.id)).toEqual(['loose']);
  });

  it('matches exact kinds by value, case aside, and never across kinds', () => {
    const index = new BankIndex();
    index.putBank(bank('md5', { kind: 'md5', distance: 0 }));
    index.putBank(bank('sha', { kind: 'sha256', distance: 0 }));
    index.putHash({ id: 'm', bankId: 'md5', value: 'a'.repeat(32) });
    index.putHash({ id: 's', bankId: 'sha', value: 'b'.repeat(64) });
    expect(index.match({ md5: 'A'.repeat(32), sha256: 'c'.repeat(64) }).matches.map((hit) => hit.hashId)).toEqual([
      'm',
    ]);
    expect(index.match({ md5: 'b'.repeat(32), pdq: 'b'.repeat(64) }).matches).toEqual([]);
  });

  it('never matches with a disabled bank, and matches again once it is enabled', () => {
    const index = new BankIndex();
    index.putBank(bank('b1', { enabled: false }));
    index.putHash({ id: 'h1', bankId: 'b1', value: pdqA });
    expect(index.active).toBe(false);
    expect(index.match({ pdq: pdqA }).matches).toEqual([]);
    index.putBank(bank('b1'));
    expect(index.match({ pdq: pdqA }).matches).toHaveLength(1);
  });

  it('cancels a positive PDQ match covered by a negative hash, and keeps one the negative does not cover', () => {
    const index = new BankIndex();
    index.putBank(bank('harm'));
    index.putBank(bank('allow', { negative: true, distance: 10 }));
    index.putHash({ id: 'meme', bankId: 'harm', value: pdqA });
    index.putHash({ id: 'other', bankId: 'harm', value: near(28) });
    index.putHash({ id: 'benign', bankId: 'allow', value: near(2) });
    const outcome = index.match({ pdq: near(4) });
    // `benign` (2 bits from `meme`) covers it; `other` is 26 bits from `benign`, beyond the negative bank's 10.
    expect(outcome.matches.map((hit) => hit.hashId)).toEqual(['other']);
    expect(outcome.cancelled.map(({ hit, by }) => [hit.hashId, by.hashId])).toEqual([['meme', 'benign']]);
  });

  it('cancels every match of an image whose exact bytes a negative bank holds', () => {
    const index = new BankIndex();
    index.putBank(bank('harm'));
    index.putBank(bank('allow', { negative: true, kind: 'sha256', distance: 0 }));
    index.putHash({ id: 'meme', bankId: 'harm', value: pdqA });
    index.putHash({ id: 'file', bankId: 'allow', value: 'c'.repeat(64) });
    const outcome = index.match({ pdq: pdqA, sha256: 'c'.repeat(64) });
    expect(outcome.matches).toEqual([]);
    expect(outcome.cancelled).toHaveLength(1);
  });

  it('does not cancel anything with a negative bank that is disabled', () => {
    const index = new BankIndex();
    index.putBank(bank('harm'));
    index.putBank(bank('allow', { negative: true, enabled: false }));
    index.putHash({ id: 'meme', bankId: 'harm', value: pdqA });
    index.putHash({ id: 'benign', bankId: 'allow', value: pdqA });
    expect(index.match({ pdq: pdqA }).matches.map((hit) => hit.hashId)).toEqual(['meme']);
  });

  it('forgets a removed hash and every hash of a removed bank', () => {
    const index = new BankIndex();
    index.putBank(bank('b1'));
    index.putBank(bank('b2', { kind: 'md5', distance: 0 }));
    index.putHash({ id: 'h1', bankId: 'b1', value: pdqA });
    index.putHash({ id: 'h2', bankId: 'b2', value: 'a'.repeat(32) });
    index.removeHash('h1');
    expect(index.match({ pdq: pdqA }).matches).toEqual([]);
    index.removeBank('b2');
    expect(index.match({ md5: 'a'.repeat(32) }).matches).toEqual([]);
    expect(index.hashCount).toBe(0);
  });
});
