import { TenantSettings } from './settings';

describe('roll-out sampling', () => {
  it('defaults the roll-out to 100 %', () => {
    expect(TenantSettings.parse({}).rolloutPercentage).toBe(100);
  });
});
