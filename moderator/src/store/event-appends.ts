import { insertInOrder, WriteGroups, type Gathering } from '@vigil/proto/platform';
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
 * group is in flight go in one ordered insert when it returns. Every insert of events opens an outbox slot first
 * (OutboxStore.openAppend: the slot's marker is durable before any event carrying it can be), and the events carry
 * it, so that a sweep finds any of them the relay did not publish.
 */
export class EventAppends {
  private readonly groups: WriteGroups<EventDoc[], GroupAppend>;

  constructor(
    private readonly events: Collection<EventDoc>,
    private readonly outbox: OutboxStore,
    maxGroup: number,
    gathering?: Gathering,
  ) {
    this.groups = new WriteGroups((groups) => this.appendGroup(groups), maxGroup, gathering);
  }

  /** Appends one commit's events, in order; how many went in before a version another writer took (all: none was). */
  async append(docs: EventDoc[]): Promise<number> {
    const outcome = await this.groups.write(docs);
    if (outcome.kind === 'stored') return docs.length;
    // Another commit of the group conflicted before this one's turn: its events go now, alone.
    return outcome.kind === 'conflict' ? outcome.stored : this.insertEvents(docs);
  }

  /**
   * One group's appends in one ordered insert, which stops at the first version taken; the commits before it are
   * stored, the one it belongs to conflicts, and the ones after were not reached.
   */
  private async appendGroup(groups: readonly EventDoc[][]): Promise<GroupAppend[]> {
    const stored = await this.insertEvents(groups.flat());
    let end = 0;
    return groups.map((docs) => {
      const start = end;
      end += docs.length;
      if (stored >= end) return { kind: 'stored' };
      return stored >= start ? { kind: 'conflict', stored: stored - start } : { kind: 'not_reached' };
    });
  }

  /**
   * Inserts events in order, in an outbox slot; how many went in before a version already taken (all of them when none
   * was). Ordered: the events before the first version taken are stored; any other failure proves nothing and throws,
   * and the slot is left to a sweep.
   */
  private async insertEvents(docs: EventDoc[]): Promise<number> {
    const slot = await this.outbox.openAppend();
    let stored = 0;
    let certain = false;
    try {
      stored = await guarded(() =>
        insertInOrder(
          this.events,
          docs.map((doc) => ({ ...doc, slot })),
        ),
      );
      certain = true;
      return stored;
    } finally {
      this.outbox.closeAppend(
        slot,
        docs.slice(0, stored).map((doc) => doc._id),
        certain,
      );
    }
  }
}
