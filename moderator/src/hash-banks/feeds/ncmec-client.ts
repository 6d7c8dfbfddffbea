import { XMLParser } from 'fast-xml-parser';
import { type HashKind } from '@vigil/proto';
import { HASH_PATTERN } from '../bank-rules';
import { FeedError, type FeedHttp } from './feed-http';
import { DeltaBuilder, type FeedPull, type PullBank } from './feed-pull';

/**
 * NCMEC's hash-sharing API (v2), as far as its public description goes (NCMEC documents it to members; this follows
 * the open-source client in facebook/ThreatExchange, `exchanges/clients/ncmec/hash_api.py`):
 * - HTTP basic authentication with the member's account;
 * - `GET {base}/v2/entries?from=<ISO time>&to=<ISO time>` answers XML: `<images>` and `<videos>` holding `<image>` /
 *   `<video>` entries (and `<deletedImage>` / `<deletedVideo>` tombstones), each with `<id>`, `<member id="…">`,
 *   `<classification>` and `<fingerprints>` (`<md5>`, `<sha1>`, `<pdq>`, …); `<paging><next>` is the path of the next
 *   page (appended to the base address), absent on the last.
 * Entries are not in time order, so the checkpoint moves to `to` only once every page was read; a run that stops at
 * its page bound keeps the next page's path and resumes there.
 */
export interface NcmecAccount {
  username: string;
  password: string;
}

/** A checkpoint that resumes a range part way: the path of the next page. */
const RESUME = 'next:';
const ENTRY_TAGS = ['image', 'video', 'deletedImage', 'deletedVideo'];

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  isArray: (name) => ENTRY_TAGS.includes(name),
});

type Node = Record<string, unknown>;

const childOf = (node: unknown, name: string): unknown =>
  node && typeof node === 'object' ? (node as Node)[name] : undefined;
const textOf = (node: unknown): string | undefined =>
  typeof node === 'string'
    ? node
    : typeof childOf(node, '#text') === 'string'
      ? (childOf(node, '#text') as string)
      : undefined;

export class NcmecClient {
  constructor(
    private readonly http: FeedHttp,
    private readonly baseUrl: string,
    private readonly account: NcmecAccount,
  ) {}

  /** Reads the entries changed since the checkpoint (epoch seconds; none: from the start), at most `maxPages` pages. */
  async pull(
    bank: PullBank,
    checkpoint: string | undefined,
    feedId: string,
    maxPages: number,
    now: Date,
    signal?: AbortSignal,
  ): Promise<FeedPull> {
    const delta = new DeltaBuilder();
    const to = Math.floor(now.getTime() / 1000);
    let path: string;
    let end: number;
    if (checkpoint?.startsWith(RESUME)) {
      path = checkpoint.slice(RESUME.length);
      // The range's end, as the next page's path names it: where the checkpoint moves once the range is read.
      const named = Date.parse(new URLSearchParams(path.split('?')[1] ?? '').get('to') ?? '');
      end = Number.isFinite(named) ? Math.floor(named / 1000) : to;
    } else {
      const from = Number(checkpoint ?? 0) || 0;
      end = to;
      const query = new URLSearchParams({ from: isoSeconds(from), to: isoSeconds(to) });
      path = `/v2/entries?${query.toString()}`;
    }
    for (let page = 0; page < maxPages; page++) {
      const answer = await this.http.expect(
        'NCMEC entries',
        `${this.baseUrl}${path}`,
        { headers: { accept: 'application/xml', authorization: this.basic() } },
        signal,
      );
      const next = this.read(answer.text, bank.kind, feedId, delta);
      if (!next) return delta.build(String(end), false);
      if (!next.startsWith('/')) throw new FeedError('invalid_file', 'NCMEC entries: a next page outside the API');
      path = next;
    }
    return delta.build(`${RESUME}${path}`, true);
  }

  /** Takes one page's entries into `delta`; the path of the next page, if any. */
  private read(xml: string, kind: HashKind, feedId: string, delta: DeltaBuilder): string | undefined {
    let document: Node;
    try {
      document = parser.parse(xml) as Node;
    } catch {
      throw new FeedError('invalid_file', 'NCMEC entries: not XML');
    }
    const root = Object.entries(document).find(([key]) => !key.startsWith('?'))?.[1];
    if (!root || typeof root !== 'object') throw new FeedError('invalid_file', 'NCMEC entries: an empty answer');
    for (const group of ['images', 'videos']) {
      const holder = childOf(root, group);
      for (const tag of ENTRY_TAGS) {
        const entries = childOf(holder, tag);
        if (!Array.isArray(entries)) continue;
        for (const entry of entries as unknown[]) {
          const value = fingerprintOf(childOf(entry, 'fingerprints'), kind);
          if (!value) {
            delta.skip();
          } else if (tag.startsWith('deleted')) {
            delta.withdraw(value);
          } else {
            const member = childOf(entry, 'member');
            const metadata: Record<string, string> = { source: 'ncmec', feed: feedId };
            const id = textOf(childOf(entry, 'id'));
            const memberId = childOf(member, '@id');
            const classification = textOf(childOf(entry, 'classification'));
            if (id) metadata.entry = id.slice(0, 200);
            if (typeof memberId === 'string') metadata.member = memberId.slice(0, 200);
            if (classification) metadata.classification = classification.slice(0, 200);
            delta.add(value, metadata);
          }
        }
      }
    }
    const next = textOf(childOf(childOf(root, 'paging'), 'next'));
    return next?.trim() || undefined;
  }

  private basic(): string {
    return `Basic ${Buffer.from(`${this.account.username}:${this.account.password}`).toString('base64')}`;
  }
}

/** The entry's fingerprint of the bank's kind (NCMEC's tag names, any case), if it has one that is well formed. */
function fingerprintOf(fingerprints: unknown, kind: HashKind): string | undefined {
  if (!fingerprints || typeof fingerprints !== 'object') return undefined;
  for (const [tag, node] of Object.entries(fingerprints as Node)) {
    if (tag.toLowerCase() !== kind) continue;
    const value = textOf(node)?.trim().toLowerCase();
    if (value && HASH_PATTERN[kind].test(value)) return value;
  }
  return undefined;
}

/** NCMEC's time format: `yyyy-MM-ddTHH:mm:ssZ`. */
function isoSeconds(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
