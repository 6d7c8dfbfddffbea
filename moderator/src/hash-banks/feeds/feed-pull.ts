import type { HashKind } from '@vigil/proto';
import type { ImportRow } from '../csv-import';

/**
 * What one run read from its source:
 * - `full`: the whole list (a file feed); hashes this feed brought before and not in `rows` are withdrawn;
 * - `delta`: changes since the checkpoint (an exchange): `rows` to add, `withdrawn` hash values to delete;
 * - `unchanged`: the source said nothing changed (304).
 */
export type FeedPull =
  | { kind: 'unchanged' }
  | { kind: 'full'; rows: ImportRow[]; validators: { etag?: string; lastModified?: string } }
  | {
      kind: 'delta';
      rows: ImportRow[];
      withdrawn: string[];
      /** Records of a kind the bank does not hold, or not a hash: counted, not taken. */
      skipped: number;
      checkpoint: string;
      /** The source holds more after the checkpoint: the feed runs again at once. */
      more: boolean;
    };

/** The bank a run writes to, as the sources need it. */
export interface PullBank {
  kind: HashKind;
}

/** The latest state of each hash read by an exchange, in reading order: the last record of a hash wins. */
export class DeltaBuilder {
  private readonly states = new Map<string, { withdrawn: boolean; metadata: Record<string, string> }>();
  skipped = 0;

  add(value: string, metadata: Record<string, string>): void {
    this.states.delete(value);
    this.states.set(value, { withdrawn: false, metadata });
  }

  withdraw(value: string): void {
    this.states.delete(value);
    this.states.set(value, { withdrawn: true, metadata: {} });
  }

  skip(): void {
    this.skipped += 1;
  }

  build(checkpoint: string, more: boolean): FeedPull {
    const rows: ImportRow[] = [];
    const withdrawn: string[] = [];
    for (const [value, state] of this.states) {
      if (state.withdrawn) withdrawn.push(value);
      else rows.push({ value, metadata: state.metadata });
    }
    return { kind: 'delta', rows, withdrawn, skipped: this.skipped, checkpoint, more };
  }
}
