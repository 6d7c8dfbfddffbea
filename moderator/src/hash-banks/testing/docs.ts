import type { BankDoc, HashDoc } from '../hash-bank-store';

// For specs: a bank and a hash as the store holds them, tenant `ten_1`, bank `bnk_1`, with the fields a spec changes.

export const bankDoc = (over: Partial<BankDoc> = {}): BankDoc => ({
  _id: 'bnk_1',
  tenantId: 'ten_1',
  name: 'NCII',
  kind: 'pdq',
  distance: 31,
  action: 'flag',
  negative: false,
  enabled: true,
  salt: 's',
  createdAt: new Date(0),
  updatedAt: new Date(0),
  ...over,
});

export const hashDoc = (value: string, over: Partial<HashDoc> = {}): HashDoc => ({
  _id: 'hsh_1',
  tenantId: 'ten_1',
  bankId: 'bnk_1',
  value,
  metadata: {},
  enabled: true,
  review: 'unreviewed',
  change: 'ten_1#1',
  createdAt: new Date(0),
  updatedAt: new Date(0),
  ...over,
});
