import { COLLECTIONS } from '@vigil/proto';
import { scratchDb } from '../../../deploy/test-support';
import { ReportClaims } from '../../src/store/report-claims';

/** The reporter emails' erasure on the real store: the shared day erased through, and contacts stored without a day. */
const scratch = scratchDb('erasure');
const db = scratch.db;

afterAll(() => scratch.drop());

it('gives contacts stored without a day their day, finds the oldest due, and keeps the day erased through', async () => {
  const claims = new ReportClaims(db);
  await claims.ensureIndexes();
  expect(await claims.oldestContactDue()).toBeUndefined();
  expect(await claims.contactsErasedThrough()).toBeUndefined();

  const contacts = db.collection(COLLECTIONS.reportContacts);
  // An earlier release's contacts: one with its expiry, one with neither expiry nor day.
  await contacts.insertMany([
    {
      _id: 'rpt_a',
      tenantId: 't',
      email: 'a@example.com',
      createdAt: new Date('2025-01-01T10:00:00Z'),
      expiresAt: new Date('2025-02-01T10:00:00Z'),
    },
    { _id: 'rpt_b', tenantId: 't', email: 'b@example.com', createdAt: new Date('2025-01-01T10:00:00Z') },
  ] as never[]);
  await claims.saveReportContact('rpt_c', 't', 'c@example.com', 30);

  expect(await claims.oldestContactDue()).toBe('2025-02-02');
  // The default retention (213 days) stands for the missing expiry.
  expect(await contacts.findOne({ _id: 'rpt_b' } as never)).toMatchObject({ eraseDay: '2025-08-03' });
  expect(await claims.eraseContactsOf('2025-02-02')).toBe(1);
  expect(await claims.eraseContactsOf('2025-08-03')).toBe(1);
  expect(await contacts.countDocuments({})).toBe(1);

  await claims.markContactsErasedThrough('2025-08-03');
  await new ReportClaims(db).markContactsErasedThrough('2025-08-04');
  expect(await claims.contactsErasedThrough()).toBe('2025-08-04');
});
