import { maskSecretKey } from './payments';

const tail = 'a'.repeat(20) + 'Zz09';

describe('maskSecretKey', () => {
  it('keeps the kind, the mode and the last four characters only', () => {
    expect(maskSecretKey(`sk_live_${tail}`)).toBe('sk_live_…Zz09');
    expect(maskSecretKey(`rk_test_${tail}`)).toBe('rk_test_…Zz09');
  });
});
