import { type HashMatchRecord, type ImageHashRecord } from '@vigil/proto';
import { DEFAULT_RULES } from '@vigil/proto/rules';
import type { ImageFetcher } from './images/fetch';
import { createEngine } from './rule-engine';
import type { BankMatcher, EngineInput } from './types';

// The engine with hash banks: fake fetcher and matcher (the real ones are exercised by the hash-banks integration test).

const bytes = new Uint8Array([1, 2, 3]);
const fetcher = {
  fetch: (url: string) =>
    Promise.resolve(
      url.includes('missing')
        ? { ok: false as const, failure: 'http_status' as const }
        : { ok: true as const, bytes, contentType: 'image/png' },
    ),
} as unknown as ImageFetcher;

function matcher(active: boolean, matches: HashMatchRecord[]) {
  const seen: { hashed: number; matched: ImageHashRecord[][] } = { hashed: 0, matched: [] };
  const banks: BankMatcher = {
    active: () => Promise.resolve(active),
    hash: () => {
      seen.hashed++;
      return Promise.resolve({
        md5: 'a'.repeat(32),
        sha256: 'b'.repeat(64),
        pdq: { hash: 'c'.repeat(64), quality: 90 },
      });
    },
    match: (_tenantId, images) => {
      seen.matched.push([...images]);
      return Promise.resolve(matches);
    },
  };
  return { banks, seen };
}

const record = (imageUrls: string[]): EngineInput => ({
  entity: 'post',
  name: '',
  text: 'hello',
  imageUrls,
  externalUrls: [],
  tenantId: 't1',
});

const match: HashMatchRecord = {
  position: 1,
  bankId: 'bnk_1',
  bankName: 'NCII',
  kind: 'pdq',
  distance: 4,
  hashId: 'hsh_1',
  metadata: { source: 'stopncii' },
  action: 'flag',
};

describe('the engine with hash banks', () => {
  it('hashes each fetched image once and flags a match with a reason naming the bank and the distance', async () => {
    const { banks, seen } = matcher(true, [match]);
    const engine = createEngine({ images: { fetcher, maxPerRecord: 3, fetchTimeoutMs: 1000 }, banks });
    const result = await engine.moderate(record(['https://x.test/a.png', 'https://x.test/missing.png']), DEFAULT_RULES);
    expect(result.status).toBe('Flagged');
    expect(result.reasons).toContain('Image 1 matched hash bank "NCII" (bnk_1, pdq distance 4)');
    expect(result.hashMatches).toEqual([match]);
    expect(seen.hashed).toBe(1);
    expect(result.imageHashes).toEqual([
      { position: 1, md5: 'a'.repeat(32), sha256: 'b'.repeat(64), pdq: 'c'.repeat(64), pdqQuality: 90 },
    ]);
    expect(seen.matched).toEqual([result.imageHashes]);
  });

  it('does not flag for a match a negative bank cancelled, and keeps it on the result', async () => {
    const cancelled = { ...match, cancelledBy: 'hsh_2' };
    const { banks } = matcher(true, [cancelled]);
    const engine = createEngine({ images: { fetcher, maxPerRecord: 3, fetchTimeoutMs: 1000 }, banks });
    const result = await engine.moderate(record(['https://x.test/a.png']), DEFAULT_RULES);
    expect(result.status).toBe('Compliant');
    expect(result.hashMatches).toEqual([cancelled]);
  });

  it('neither fetches nor hashes for a tenant without an enabled bank', async () => {
    const { banks, seen } = matcher(false, [match]);
    const engine = createEngine({ images: { fetcher, maxPerRecord: 3, fetchTimeoutMs: 1000 }, banks });
    const result = await engine.moderate(record(['https://x.test/a.png']), DEFAULT_RULES);
    expect(result.status).toBe('Compliant');
    expect(seen.hashed).toBe(0);
    expect(result.imageHashes).toBeUndefined();
  });
});
