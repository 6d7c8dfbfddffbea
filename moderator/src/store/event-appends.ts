import { insertInOrder, WriteGroups } from '@vigil/proto/platform';
import { type Collection } from 'mongodb';
import type { EventDoc } from './event-doc';
import { guarded } from './mongo-errors';
import type { OutboxStore } from './outbox-store';

/**
 * How a commit's events fared in a group append: all stored; a conflict, `stored` of them in before it; or none
 * stored because another commit of the group conflicted first (an ordered insert stops there).
 */
type GroupAppend = { kind: 'stored' } | { kind: 'conflict'; stored: number } | { kind: 'not_reached' };

/**
 * The append of EventStore's commits, a group commit (see WriteGroups): the events of every commit asked for while a
 * group is in flight go in one ordered insert when it returns, their outbox copies in one insert before it, so that no
 * event is stored without one. The copies of events a conflict kept out are removed again; one left behind (a crash
 * between the two writes, a failed removal) has no event, which the relay checks before publishing a copy it did not
 * see appended (`storedIds`).
 */
export class EventAppends {
  private readonly groups: WriteGroups<EventDoc[], GroupAppend>;

  constructor(
    private readonly events: Collection<EventDoc>,
    private readonly outbox: OutboxStore,
    maxGroup: number,
  ) {
    this.groups = new WriteGroups((groups) => this.appendGroup(groups), maxGroup);
  }

  /** Appends one commit's events, in order; how many went in before a version another writer took (all: none was). */
  async append(docs: EventDoc[]): Promise<number> {
    const outcome = await this.groups.write(docs);
    if (outcome.kind === 'stored') return docs.length;
    // Another commit of the group conflicted before this one's turn: its copies are in, its events go now, alone.
    const stored = outcome.kind === 'conflict' ? outcome.stored : await this.insertEvents(docs);
    if (stored === docs.length) return stored;
    const left = docs.slice(stored).map((doc) => ({ _id: doc._id, slot: this.outbox.slotOf(doc._id) }));
    await this.outbox.removeEntries(left).catch(() => undefined);
    return stored;
  }

  /**
   * One group's appends: every outbox copy, then every event in one ordered insert, which stops at the first version
   * taken; the commits before it are stored, the one it belongs to conflicts, and the ones after were not reached.
   */
  private async appendGroup(groups: readonly EventDoc[][]): Promise<GroupAppend[]> {
    await this.outbox.insertCopies(groups.flat());
    const stored = await this.insertEvents(groups.flat());
    let end = 0;
    return groups.map((docs) => {
      const start = end;
      end += docs.length;
      if (stored >= end) return { kind: 'stored' };
      return stored >= start ? { kind: 'conflict', stored: stored - start } : { kind: 'not_reached' };
    });
  }

  /** Inserts events in order; how many went in before a version already taken (all of them when none was). */
  private insertEvents(docs: EventDoc[]): Promise<number> {
    // Ordered: the events before the first version taken are stored; any other failure proves nothing and throws.
    return guarded(() => insertInOrder(this.events, docs));
  }
}
