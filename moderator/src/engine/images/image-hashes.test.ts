import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { imageHashes } from './image-hashes';
import { hammingDistance } from './pdq/hamming';

// ThreatExchange's rule for real images (pdq/README.md): every hash of quality 80 or more is within Hamming distance
// 10 of the C++ reference's hash of the same file. fixtures/README.md says how reference.json was made.
const fixtures = path.join(__dirname, 'pdq', 'fixtures');
const reference = JSON.parse(readFileSync(path.join(fixtures, 'reference.json'), 'utf8')) as {
  photos: Array<{ file: string; hash: string; quality: number; md5: string; sha256: string }>;
};
const photos = reference.photos.map((photo) => ({ ...photo, bytes: readFileSync(path.join(fixtures, photo.file)) }));
const limits = { maxPixels: 20_000_000 };

describe('imageHashes', () => {
  it.each(photos)('hashes $file within distance 10 of the reference when of quality 80 or more', async (photo) => {
    const hashes = await imageHashes(photo.bytes, limits);
    if (hashes.pdq === null) throw new Error(`no PDQ hash: ${hashes.failure}`);
    // The same side of the quality bar as the reference, so the distance bound applies to the same photos.
    expect(hashes.pdq.quality >= 80).toBe(photo.quality >= 80);
    if (hashes.pdq.quality >= 80) expect(hammingDistance(hashes.pdq.hash, photo.hash)).toBeLessThanOrEqual(10);
  });

  it('holds most photos to the bound (they are of quality 80 or more)', () => {
    expect(photos.filter((photo) => photo.quality >= 80).length).toBeGreaterThanOrEqual(15);
  });

  it.each(photos)('gives the MD5 and SHA-256 of the bytes of $file', async (photo) => {
    const hashes = await imageHashes(photo.bytes, limits);
    expect({ md5: hashes.md5, sha256: hashes.sha256 }).toEqual({ md5: photo.md5, sha256: photo.sha256 });
  });

  it('gives the digests and no PDQ hash of bytes that are not an image', async () => {
    expect(await imageHashes(Buffer.from('abc'), limits)).toEqual({
      md5: '900150983cd24fb0d6963f7d28e17f72',
      sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
      pdq: null,
      failure: 'undecodable',
    });
  });

  it('refuses to decode an image of more pixels than allowed, from its header', async () => {
    const photo = photos[0]!;
    expect(await imageHashes(photo.bytes, { maxPixels: 1000 })).toEqual({
      md5: photo.md5,
      sha256: photo.sha256,
      pdq: null,
      failure: 'too_many_pixels',
    });
  });

  it('drops an alpha channel rather than blending it', async () => {
    const { data, info } = await sharp(photos[0]!.bytes).resize(300, 200).raw().toBuffer({ resolveWithObject: true });
    const raw = { raw: { width: info.width, height: info.height, channels: info.channels } };
    const opaque = await sharp(data, raw).png().toBuffer();
    const translucent = await sharp(data, raw).ensureAlpha(0.25).png().toBuffer();
    const [a, b] = await Promise.all([imageHashes(opaque, limits), imageHashes(translucent, limits)]);
    expect(a.pdq).not.toBeNull();
    expect(b.pdq).toEqual(a.pdq);
  });
});
