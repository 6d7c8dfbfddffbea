import { COLLECTIONS, monotonicUlid, type HashMatchRecord } from '@vigil/proto';
import { scratchDb } from '../../../deploy/test-support';
import { FloodGuard } from '../../src/hash-banks/quarantine/flood-guard';
import { QuarantineStore } from '../../src/hash-banks/quarantine/quarantine-store';
import { EventStore } from '../../src/store/event-store';

// Three moderator replicas' flood guards over one real store, matching the same hashes at once: each match claims a
// numbered slot of its window by a unique insert, so exactly the threshold of matches act, one HashQuarantined event is stored (its unique
// stream version), and every later match is held once.

const scratch = scratchDb('hash_quarantine_replicas');
const quarantines = new QuarantineStore(scratch.db);
const events = new EventStore(scratch.db);
const tenantId = 'ten_flood';
const newId = monotonicUlid();

beforeAll(async () => {
  await events.ensureIndexes();
  await quarantines.ensureIndexes();
});
afterAll(() => scratch.drop());

const replica = () =>
  new FloodGuard({
    store: quarantines,
    raise: async (event) => (await events.streams.appendUnprojected([event])) === 1,
    newId: () => newId(Date.now()),
  });

const match = (hashId: string): HashMatchRecord => ({
  position: 1,
  bankId: 'bnk_1',
  bankName: 'Memes',
  kind: 'pdq',
  distance: 3,
  hashId,
  metadata: {},
  action: 'flag',
});

describe('flood quarantine across replicas', () => {
  it('lets exactly the threshold act, raises one quarantine and holds each later match once', async () => {
    const replicas = [replica(), replica(), replica()];
    const flood = { threshold: 5, windowSeconds: 604_800 };
    const outcomes = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        replicas[i % 3]!.screen(tenantId, [match('hsh_meme'), match('hsh_other')], () => flood, {
          recordId: `rec_${i}`,
        }),
      ),
    );
    const acting = (hashId: string) =>
      outcomes.filter((out) => out.some((m) => m.hashId === hashId && m.quarantined !== true)).length;
    expect(acting('hsh_meme')).toBe(5);
    expect(acting('hsh_other')).toBe(5);

    const raised = await scratch.db
      .collection(COLLECTIONS.events)
      .find({ type: 'HashQuarantined', tenantId })
      .toArray();
    expect(raised.map((event) => [event.stream, event.version]).sort()).toEqual([
      [`hash-${tenantId}-hsh_meme`, 1],
      [`hash-${tenantId}-hsh_other`, 1],
    ]);
    const state = await quarantines.quarantineOf('hsh_meme');
    expect(state).toMatchObject({ n: 1, state: 'quarantined', threshold: 5 });
    const held = await quarantines.heldOf('hsh_meme');
    expect(held).toHaveLength(19);
    expect(new Set(held.map((doc) => doc.recordId)).size).toBe(19);
    expect(await quarantines.heldCount('hsh_meme')).toBe(19);
    expect(state!.overflow).toBe(0);

    // A later match on any replica is held too, without a second event.
    const [later] = await replicas[1]!.screen(tenantId, [match('hsh_meme')], () => flood, { recordId: 'rec_late' });
    expect(later!.quarantined).toBe(true);
    expect(await scratch.db.collection(COLLECTIONS.events).countDocuments({ type: 'HashQuarantined' })).toBe(2);
  });

  it('deletes a hash’s counts of older windows when its first match of a new window is counted', async () => {
    let now = Date.UTC(2026, 0, 5);
    const guard = new FloodGuard({
      store: quarantines,
      raise: async (event) => (await events.streams.appendUnprojected([event])) === 1,
      newId: () => newId(Date.now()),
      now: () => new Date(now),
    });
    const flood = { threshold: 10, windowSeconds: 3600 };
    for (let i = 0; i < 4; i++) await guard.screen(tenantId, [match('hsh_third')], () => flood, { recordId: `r${i}` });
    const slots = scratch.db.collection(COLLECTIONS.hashMatchCounts);
    expect(await slots.countDocuments({ hashId: 'hsh_third' })).toBe(4);
    now += 3600_000;
    await guard.screen(tenantId, [match('hsh_third')], () => flood, { recordId: 'r_next' });
    expect(await slots.find({ hashId: 'hsh_third' }).toArray()).toEqual([
      expect.objectContaining({ n: 1, window: new Date(Date.UTC(2026, 0, 5, 1)) }),
    ]);
  });
});
