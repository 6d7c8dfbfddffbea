import pino from 'pino';
import type { DomainEvent } from '@vigil/proto';
import { HashBankUseCases } from '../hash-bank-use-cases';
import type { AddFollowUp, BankDoc, HashBankStore, HashDoc } from '../hash-bank-store';
import { bankDoc, hashDoc } from '../testing/docs';
import { UnavailableError } from '../../domain/errors';
import { recordHashReaction, recordHashRefill } from './record-hash-reaction';
import type { RecordState } from '../../domain/record';
import { RetroQueue } from './retro-queue';
import type { RetroPassDoc } from './retro-pass-store';

const PDQ = 'ab'.repeat(32);

const bank = bankDoc;

const hash = (over: Partial<HashDoc> = {}): HashDoc => hashDoc(PDQ, { change: 'ten_1#4', ...over });

/** The use cases over a store in memory holding one bank and its hashes, with the passes they queue. */
function useCasesWith(theBank: BankDoc, stored: HashDoc[] = []) {
  const passes: RetroPassDoc[] = [];
  let woken = 0;
  const queue = new RetroQueue({
    create: (pass) => {
      const doc = { ...pass, open: true, state: 'queued', attempt: 0, bucket: 0 } as RetroPassDoc;
      passes.push(doc);
      return Promise.resolve(doc);
    },
    ofBank: (bankId) => Promise.resolve(passes.filter((pass) => pass.bankId === bankId).reverse()),
  });
  queue.onQueued(() => (woken += 1));
  const hashes = new Map(stored.map((doc) => [doc._id, doc]));
  const store = {
    getBank: () => Promise.resolve(theBank),
    addHashes: async (_t: string, _b: string, rows: { value: string }[], followUp?: AddFollowUp) => {
      const added = rows.map((row, n) => hash({ _id: `hsh_new${n}`, value: row.value, change: 'ten_1#5' }));
      await followUp?.run(added);
      return { added, duplicates: 0 };
    },
    getHash: (_t: string, _b: string, id: string) => Promise.resolve(hashes.get(id)!),
    updateHash: (_t: string, _b: string, id: string, patch: Partial<HashDoc>) => {
      const next = { ...hashes.get(id)!, ...patch, change: 'ten_1#6' };
      hashes.set(id, next);
      return Promise.resolve(next);
    },
  } as unknown as HashBankStore;
  const useCases = new HashBankUseCases({
    store,
    matcher: {} as never,
    policiesOf: () => Promise.resolve([]),
    fetchTimeoutMs: 0,
    retro: queue,
  });
  return { useCases, passes, woken: () => woken };
}

describe('retroactive passes queued by the use cases', () => {
  it('queues one pass for the hashes an add wrote, by id and change, and wakes the local runner', async () => {
    const { useCases, passes, woken } = useCasesWith(bank());
    await useCases.addHashes('ten_1', 'bnk_1', { hashes: [{ value: PDQ }, { value: 'cd'.repeat(32) }] });
    expect(passes).toHaveLength(1);
    expect(passes[0]).toMatchObject({
      tenantId: 'ten_1',
      bankId: 'bnk_1',
      trigger: 'added',
      hashIds: ['hsh_new0', 'hsh_new1'],
      change: 'ten_1#5',
    });
    expect(JSON.stringify(passes[0])).not.toContain(PDQ);
    expect(woken()).toBe(1);
    expect((await useCases.lastRetroPass('ten_1', 'bnk_1'))?._id).toBe(passes[0]?._id);
  });

  it('queues a pass for a CSV import as for hashes one by one', async () => {
    const { useCases, passes } = useCasesWith(bank());
    await useCases.addHashes('ten_1', 'bnk_1', { hashes: [], csv: `hash,source\n${PDQ},stopncii\n` });
    expect(passes.map((pass) => pass.hashIds)).toEqual([['hsh_new0']]);
  });

  it('queues none for a negative bank: its hashes flag nothing', async () => {
    const { useCases, passes } = useCasesWith(bank({ negative: true }));
    await useCases.addHashes('ten_1', 'bnk_1', { hashes: [{ value: PDQ }] });
    expect(passes).toEqual([]);
  });

  it.each([
    ['enabled again', hash({ enabled: false }), { enabled: true }, 'enabled'],
    ['reconfirmed after a deconfirmation', hash({ review: 'deconfirmed' }), { review: 'confirmed' }, 'confirmed'],
  ])('queues a pass for a hash %s', async (_name, before, change, trigger) => {
    const { useCases, passes } = useCasesWith(bank(), [before]);
    await useCases.updateHash('ten_1', 'bnk_1', 'hsh_1', change);
    expect(passes).toHaveLength(1);
    expect(passes[0]).toMatchObject({ trigger, hashIds: ['hsh_1'], change: 'ten_1#6' });
  });

  it.each([
    ['a metadata edit', hash(), { metadataJson: '{"case":"1"}' }],
    ['a confirmation of a hash that acts already', hash(), { review: 'confirmed' }],
    ['a hash disabled', hash(), { enabled: false }],
  ])('queues none for %s', async (_name, before, change) => {
    const { useCases, passes } = useCasesWith(bank(), [before]);
    await useCases.updateHash('ten_1', 'bnk_1', 'hsh_1', change);
    expect(passes).toEqual([]);
  });
});

describe('recordHashReaction', () => {
  const image = { position: 1, md5: 'a'.repeat(32), sha256: 'b'.repeat(64), pdq: PDQ, pdqQuality: 90 };
  const moderated = (data: Record<string, unknown>) =>
    ({ id: 'e1', type: 'RecordModerated', tenantId: 'ten_1', data: { recordId: 'rec_1', ...data } }) as DomainEvent;

  function reactionWith(fail = false) {
    const writes: string[] = [];
    let failures = 0;
    const reaction = recordHashReaction(
      {
        put: (tenantId, recordId, images) => {
          if (fail) return Promise.reject(new Error('store down'));
          writes.push(`put ${tenantId} ${recordId} ${images.length}`);
          return Promise.resolve();
        },
        remove: (recordId) => {
          writes.push(`remove ${recordId}`);
          return Promise.resolve();
        },
      },
      pino({ level: 'silent' }),
      () => (failures += 1),
    );
    return { reaction, writes, failures: () => failures };
  }

  it('stores the hashes an automatic moderation left, and forgets a deleted record', async () => {
    const { reaction, writes } = reactionWith();
    await reaction.react([
      moderated({ via: 'AI', imageHashes: [image] }),
      { id: 'e2', type: 'RecordDeleted', tenantId: 'ten_1', data: { recordId: 'rec_2' } } as DomainEvent,
    ]);
    expect(writes).toEqual(['put ten_1 rec_1 1', 'remove rec_2']);
  });

  it.each([
    ['a manual decision', { via: 'Manual', imageHashes: [image] }],
    ['a moderation that fetched no image (the record keeps its hashes)', { via: 'AI' }],
  ])('writes nothing after %s', async (_name, data) => {
    const { reaction, writes } = reactionWith();
    await reaction.react([moderated(data)]);
    expect(writes).toEqual([]);
  });

  it('counts a failed write and never throws: the commit stands', async () => {
    const { reaction, failures } = reactionWith(true);
    await expect(reaction.react([moderated({ via: 'AI', imageHashes: [image] })])).resolves.toBeUndefined();
    expect(failures()).toBe(1);
  });
});

describe('recordHashRefill (rebuild-projections)', () => {
  const image = { position: 1, md5: 'a'.repeat(32), sha256: 'b'.repeat(64), pdq: PDQ };
  const record = (over: Partial<RecordState>) =>
    ({ _id: 'rec_1', tenantId: 'ten_1', deleted: false, passthrough: false, ...over }) as RecordState;

  it.each([
    ['writes the hashes of a record that keeps some', record({ imageHashes: [image] }), ['put ten_1 rec_1']],
    ['removes those of a deleted record', record({ deleted: true, imageHashes: [image] }), ['remove rec_1']],
    ['writes nothing for a record without hashes', record({}), []],
  ])('%s', async (_name, state, expected) => {
    const writes: string[] = [];
    const refill = recordHashRefill({
      put: (tenantId, recordId) => Promise.resolve(void writes.push(`put ${tenantId} ${recordId}`)),
      remove: (recordId) => Promise.resolve(void writes.push(`remove ${recordId}`)),
    });
    await refill(state);
    expect(writes).toEqual(expected);
  });
});

describe('RetroQueue', () => {
  it('stores a pass again after a store blip, with the same id, and gives up on other failures', async () => {
    const ids: string[] = [];
    let failures = 1;
    const queue = new RetroQueue({
      create: (pass) => {
        ids.push(pass._id);
        if (failures-- > 0) return Promise.reject(new UnavailableError('database unavailable'));
        return Promise.resolve({ ...pass } as RetroPassDoc);
      },
      ofBank: () => Promise.resolve([]),
    });
    const pass = await queue.queue(bank(), [hash()], 'added');
    expect(ids).toEqual([pass?._id, pass?._id]);

    const broken = new RetroQueue({
      create: () => Promise.reject(new Error('bad document')),
      ofBank: () => Promise.resolve([]),
    });
    await expect(broken.queue(bank(), [hash()], 'added')).rejects.toThrow('bad document');
  });
});
