import sharp from 'sharp';
import { textLayout } from './text-layout';

/** Black bars 12 px high on white, like lines of text, turned by `deg` degrees (clockwise), as an ink image. */
async function bars(deg: number): Promise<{ data: Buffer; width: number; height: number }> {
  const rects = [60, 110, 160].map((y) => `<rect x="80" y="${y}" width="440" height="12" fill="#000"/>`).join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="300"><rect width="600" height="300" fill="#fff"/>${rects}</svg>`;
  const { data, info } = await sharp(Buffer.from(svg))
    .rotate(deg, { background: '#ffffff' })
    .grayscale()
    .threshold(128)
    .extractChannel(0)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

describe('textLayout', () => {
  it('finds level lines and their height', async () => {
    const layout = textLayout(await bars(0));
    expect(layout.tiltDeg).toBe(0);
    expect(layout.lineHeight).toBeGreaterThanOrEqual(10);
    expect(layout.lineHeight).toBeLessThanOrEqual(14);
  });

  it.each([7, -11, 4])('finds lines turned by %d degrees', async (deg) => {
    const layout = textLayout(await bars(deg));
    expect(Math.abs(layout.tiltDeg - deg)).toBeLessThanOrEqual(0.5);
  });

  it('finds nothing in an image without ink', () => {
    const width = 100;
    const height = 50;
    expect(textLayout({ data: Buffer.alloc(width * height, 255), width, height })).toEqual({
      tiltDeg: 0,
      lineHeight: 0,
    });
  });
});
