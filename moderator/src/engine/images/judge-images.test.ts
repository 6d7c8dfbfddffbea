import { imageReasons, sampleImages } from './judge-images';

describe('sampleImages', () => {
  const urls = Array.from({ length: 10 }, (_, index) => `https://img.example/${index}.png`);

  it('keeps at most the limit, in record order, with positions counted from 1', () => {
    const sampled = sampleImages(urls, 3);
    expect(sampled).toHaveLength(3);
    expect(sampled.map(({ position }) => position)).toEqual(
      [...sampled.map(({ position }) => position)].sort((a, b) => a - b),
    );
    for (const { url, position } of sampled) expect(urls[position - 1]).toBe(url);
  });

  it('chooses the same images whatever their order in the record', () => {
    const chosen = (list: string[]) =>
      sampleImages(list, 3)
        .map(({ url }) => url)
        .sort();
    expect(chosen([...urls].reverse())).toEqual(chosen(urls));
  });

  it('judges a URL given twice once, at its first position', () => {
    expect(sampleImages(['https://a.example/x.png', 'https://a.example/x.png'], 3)).toEqual([
      { url: 'https://a.example/x.png', position: 1 },
    ]);
  });
});

describe('imageReasons', () => {
  const verdicts = [
    { position: 1, scores: { Porn: 0.91, Neutral: 0.05 } },
    { position: 2, failure: 'timeout' as const },
  ];

  it('flags a class strictly over its threshold, naming the image by position', () => {
    expect(imageReasons(verdicts, { Porn: 0.9, Neutral: 0.05 }, 'ignore')).toEqual([
      'Image 1 classified as Porn (0.91)',
    ]);
  });

  it('flags an image that could not be judged only when asked', () => {
    expect(imageReasons(verdicts, {}, 'flag')).toEqual(['Image 2 could not be judged (timeout): flagged for review']);
    expect(imageReasons(verdicts, {}, 'ignore')).toEqual([]);
  });
});
