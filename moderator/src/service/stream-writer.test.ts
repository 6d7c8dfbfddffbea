import { TenantVersions, type DomainEvent } from '@vigil/proto';
import type { Loaded } from '../domain/stream';
import type { RecordState } from '../domain/record';
import { ConflictError } from '../domain/errors';
import { StreamConflict, type EventStore } from '../store/event-store';
import { StreamWriter } from './stream-writer';

/**
 * Only `commitTelling` is reached by the writer; it fails with the given errors in turn (telling the events a conflict
 * carries as stored), then appends `appended`.
 */
function storeFailing(failures: Error[], appended: DomainEvent[] = []): EventStore {
  return {
    commitTelling: (stored: (events: DomainEvent[]) => void) => {
      const failure = failures.shift();
      if (failure === undefined) {
        if (appended.length > 0) stored(appended);
        return Promise.resolve(appended);
      }
      if (failure instanceof StreamConflict && failure.appended.length > 0) stored(failure.appended);
      return Promise.reject(failure);
    },
  } as unknown as EventStore;
}

/** Appends `appended`, then fails as a projection write after the append would. */
function storeFailingAfterAppend(appended: DomainEvent[], failure: Error): EventStore {
  return {
    commitTelling: (stored: (events: DomainEvent[]) => void) => {
      stored(appended);
      return Promise.reject(failure);
    },
  } as unknown as EventStore;
}

const event = { id: 'evt_1' } as unknown as DomainEvent;

describe('StreamWriter', () => {
  it('runs the attempt again, reading fresh, after a conflict', async () => {
    const writer = new StreamWriter(
      storeFailing([new StreamConflict(), new StreamConflict()]),
      { appended: () => {} },
      8,
    );
    const fresh: boolean[] = [];
    const result = await writer.retrying(async (isFresh) => {
      fresh.push(isFresh);
      await writer.commit();
      return 'done';
    });
    expect(result).toBe('done');
    expect(fresh).toEqual([false, true, true]);
  });

  it('gives up with ConflictError after maxAttempts conflicts', async () => {
    const conflicts = Array.from({ length: 3 }, () => new StreamConflict());
    const writer = new StreamWriter(storeFailing(conflicts), { appended: () => {} }, 3);
    let attempts = 0;
    const run = writer.retrying(async () => {
      attempts += 1;
      await writer.commit();
    });
    await expect(run).rejects.toBeInstanceOf(ConflictError);
    expect(attempts).toBe(3);
  });

  it('throws any other failure at once', async () => {
    const failure = new Error('store down');
    const writer = new StreamWriter(storeFailing([failure]), { appended: () => {} }, 8);
    let attempts = 0;
    const run = writer.retrying(async () => {
      attempts += 1;
      await writer.commit();
    });
    await expect(run).rejects.toBe(failure);
    expect(attempts).toBe(1);
  });

  it('wakes the relay with what was appended, before a conflict too', async () => {
    const woken: DomainEvent[][] = [];
    const writer = new StreamWriter(
      storeFailing([new StreamConflict([event])], [event]),
      { appended: (e) => woken.push([...e]) },
      8,
    );
    await writer.retrying(() => writer.commit());
    expect(woken).toEqual([[event], [event]]);
  });

  it('hands the events over and runs the reactions when a write after their append fails, then throws', async () => {
    const failure = new Error('projection write failed');
    const woken: DomainEvent[][] = [];
    const reacted: DomainEvent[][] = [];
    const writer = new StreamWriter(
      storeFailingAfterAppend([event], failure),
      { appended: (e) => woken.push([...e]) },
      8,
      undefined,
      (e) => {
        reacted.push([...e]);
        return Promise.resolve();
      },
    );
    await expect(writer.commit()).rejects.toBe(failure);
    expect(woken).toEqual([[event]]);
    expect(reacted).toEqual([[event]]);
  });

  it('runs the reactions of the events stored before a conflict, and of the retry', async () => {
    const reacted: DomainEvent[][] = [];
    const later = { id: 'evt_2' } as unknown as DomainEvent;
    const writer = new StreamWriter(
      storeFailing([new StreamConflict([event])], [later]),
      { appended: () => {} },
      8,
      undefined,
      (e) => {
        reacted.push([...e]);
        return Promise.resolve();
      },
    );
    await writer.retrying(() => writer.commit());
    expect(reacted).toEqual([[event], [later]]);
  });

  it("stamps each new event with its tenant's newest configuration version seen, never lowering one", async () => {
    const versions = new TenantVersions();
    versions.observe('ten_a', 4);
    const events = [
      { id: 'evt_a', tenantId: 'ten_a' },
      { id: 'evt_b', tenantId: 'ten_b' },
      { id: 'evt_c', tenantId: 'ten_a', configVersion: 9 },
    ] as unknown as DomainEvent[];
    const writer = new StreamWriter(storeFailing([]), { appended: () => {} }, 8, versions);
    await writer.commit({ events } as unknown as Loaded<RecordState>);
    expect(events.map((e) => e.configVersion)).toEqual([4, undefined, 9]);
  });
});
