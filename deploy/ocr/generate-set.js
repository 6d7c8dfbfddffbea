'use strict';
// The labelled set of the OCR (`image-text` strategies): images of text over photo-like and plain backgrounds, made
// here with sharp from a fixed seed, each with the words a rule would match in it. Nothing is committed but this
// recipe: the bench (`npm run bench -- ocr`) and the tests make the images when they run, the same on every machine.
//
// - fonts: Roboto, Roboto Slab and Roboto Mono (regular, bold, italic, light), from npm packages (@expo-google-fonts),
//   rendered by sharp's Pango text with the font file: no system font is needed;
// - sizes: text 14 to 64 px high, on images of 480 × 270 to 1280 × 720;
// - backgrounds: half plain (white, light, dark or coloured), half photo-like (smooth colour fields, soft shapes and
//   grain, as on a photo), the text then white with a shadow, dark on a light band, or straight on the picture;
// - a quarter rotated (3 to 12 degrees either way), a quarter noisy (grain, then JPEG at quality 35 to 60).
//
// `node deploy/ocr/generate-set.js [dir]` writes the images and labels.json to dir (default /tmp/vigil-ocr-set) to look
// at them; `require` gives `items()` (the labels, no pixels) and `render(item)` (the image's bytes).
const fs = require('node:fs');
const path = require('node:path');
// The package's types are its ES module's (`types` points at index.d.mts); require gives the same function.
const sharp = /** @type {typeof import('sharp').default} */ (/** @type {unknown} */ (require('sharp')));
const { random } = require('../bench/seeded-random');

const SEED = 20260712;
const COUNT = 320;

/** Font files from npm packages, with the family and style Pango knows them by. */
const FONTS = [
  ['roboto', '400Regular/Roboto_400Regular.ttf', 'Roboto'],
  ['roboto', '700Bold/Roboto_700Bold.ttf', 'Roboto Bold'],
  ['roboto', '400Regular_Italic/Roboto_400Regular_Italic.ttf', 'Roboto Italic'],
  ['roboto', '300Light/Roboto_300Light.ttf', 'Roboto Light'],
  ['roboto-slab', '400Regular/RobotoSlab_400Regular.ttf', 'Roboto Slab'],
  ['roboto-slab', '700Bold/RobotoSlab_700Bold.ttf', 'Roboto Slab Bold'],
  ['roboto-mono', '400Regular/RobotoMono_400Regular.ttf', 'Roboto Mono'],
  ['roboto-mono', '700Bold/RobotoMono_700Bold.ttf', 'Roboto Mono Bold'],
].map(([pkg, file, name]) => ({
  name: String(name),
  file: path.join(path.dirname(require.resolve(`@expo-google-fonts/${pkg}/package.json`)), String(file)),
}));

// What spam, scams and abuse write into pictures: offers, contact details, links, and words a blocklist holds.
const OFFERS = [
  'cheap pills online',
  'free crypto giveaway',
  'double your bitcoin today',
  'hot singles near you',
  'work from home and earn',
  'limited offer buy now',
  'replica watches wholesale',
  'casino bonus no deposit',
  'verify your account now',
  'claim your prize today',
  'loans approved instantly',
  'followers and likes cheap',
  'investment returns guaranteed',
  'unlock premium for free',
  'discount code inside',
  'weight loss miracle',
];
const ABUSE = ['idiot', 'loser', 'scammer', 'trash', 'stupid', 'moron', 'creep', 'liar'];
const APPS = ['telegram', 'whatsapp', 'snapchat', 'kik', 'signal', 'instagram'];
const NAMES = ['jenny', 'mike', 'sara', 'alex', 'lily', 'omar', 'nina', 'jake', 'emma', 'ravi'];
const SITES = ['cheap-deals', 'win-prize', 'crypto-double', 'free-spins', 'bestreplica', 'fastloans', 'hotdates'];
const TLDS = ['com', 'net', 'biz', 'shop', 'xyz', 'io'];
const CAPTIONS = [
  'sunset over the lake',
  'our garden this spring',
  'happy birthday grandma',
  'weekend market finds',
  'morning coffee again',
  'new kitchen is done',
  'road trip day three',
  'first snow of winter',
];

/** One image's text lines, with the words of it that rules match (what the recall counts). */
function textOf(rand) {
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const digits = (n) => Array.from({ length: n }, () => String(Math.floor(rand() * 10))).join('');
  const kind = pick(['offer', 'offer', 'contact', 'link', 'abuse', 'caption']);
  const name = `${pick(NAMES)}${pick(['_', '', '.'])}${Math.floor(rand() * 90) + 10}`;
  const site = `${pick(SITES)}.${pick(TLDS)}`;
  const phone = `+1 ${pick(['212', '415', '646', '305'])} ${digits(3)} ${digits(4)}`;
  const offer = pick(OFFERS);
  switch (kind) {
    case 'offer':
      return { lines: [offer, pick([`visit ${site}`, `call ${phone}`, `dm ${name} on ${pick(APPS)}`])] };
    case 'contact':
      return {
        lines: [pick(['add me', 'message me', 'text me', 'contact me']), `${pick(APPS)} ${name}`, phone],
      };
    case 'link':
      return { lines: [pick(['best prices at', 'go to', 'sign up at', 'get it at']), site] };
    case 'abuse':
      return { lines: [`you are a ${pick(ABUSE)}`, pick(['everyone knows', 'stop posting', 'go away'])] };
    default:
      return { lines: [pick(CAPTIONS)] };
  }
}

/**
 * The words of a text that a rule would match: each word of three characters or more (a blocklist word, a handle, a
 * domain, an app's name), and a phone number whole, as a pattern or the `pii` strategy reads it (its digits).
 */
function ruleWords(lines) {
  const words = [];
  for (const line of lines) {
    const phone = /\+\d[\d ]{8,}\d/.exec(line);
    if (phone) words.push(phone[0]);
    const rest = phone ? line.replace(phone[0], ' ') : line;
    for (const word of rest.split(/\s+/)) if (word.length >= 3) words.push(word);
  }
  return words;
}

/** The labels of the set: what each image shows and how it is made (no pixels). */
function items() {
  const rand = random(SEED);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const between = (min, max) => min + rand() * (max - min);
  return Array.from({ length: COUNT }, (_, index) => {
    const { lines } = textOf(rand);
    const [width, height] = pick([
      [480, 270],
      [640, 360],
      [800, 400],
      [800, 600],
      [1024, 576],
      [1280, 720],
    ]);
    const photo = rand() < 0.5;
    return {
      id: `ocr-${String(index).padStart(3, '0')}`,
      lines,
      words: ruleWords(lines),
      font: pick(FONTS).name,
      size: Math.round(between(14, Math.min(64, height / 6))),
      width,
      height,
      background: photo ? 'photo' : pick(['white', 'light', 'dark', 'colour']),
      style: photo ? pick(['shadow', 'band', 'plain']) : 'plain',
      rotate: rand() < 0.25 ? Math.round(between(3, 12)) * (rand() < 0.5 ? -1 : 1) : 0,
      noisy: rand() < 0.25,
      seed: Math.floor(rand() * 2 ** 31),
      x: rand(),
      y: rand(),
      hue: rand(),
    };
  });
}

/** An RGB colour from a hue (0..1), saturation and lightness (0..1). */
function hsl(h, s, l) {
  const f = (n) => {
    const k = (n + h * 12) % 12;
    const a = s * Math.min(l, 1 - l);
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return { r: f(0), g: f(8), b: f(4) };
}

const hex = ({ r, g, b }) => `#${[r, g, b].map((v) => v.toString(16).padStart(2, '0')).join('')}`;

/** A photo-like background: a colour gradient, soft blurred shapes over it, and grain. */
async function photoBackground(item, rand) {
  const { width, height } = item;
  const base = hsl(item.hue, 0.45, 0.45);
  const other = hsl((item.hue + 0.3) % 1, 0.5, 0.6);
  const shapes = Array.from({ length: 9 }, () => {
    const colour = hex(hsl(rand(), 0.3 + rand() * 0.5, 0.2 + rand() * 0.6));
    const cx = Math.round(rand() * width);
    const cy = Math.round(rand() * height);
    const r = Math.round((0.08 + rand() * 0.3) * Math.min(width, height));
    return `<ellipse cx="${cx}" cy="${cy}" rx="${r}" ry="${Math.round(r * (0.5 + rand()))}" fill="${colour}" opacity="0.8"/>`;
  }).join('');
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${hex(base)}"/>` +
    `<stop offset="1" stop-color="${hex(other)}"/></linearGradient></defs>` +
    `<rect width="100%" height="100%" fill="url(#g)"/>${shapes}</svg>`;
  const soft = await sharp(Buffer.from(svg))
    .blur(Math.max(2, width / 80))
    .removeAlpha()
    .raw()
    .toBuffer();
  return grain(soft, rand, 18);
}

/** The pixels with uniform grain of ± amount added (fine texture, as a photo has). */
function grain(pixels, rand, amount) {
  const out = Buffer.from(pixels);
  for (let i = 0; i < out.length; i += 1) {
    out[i] = Math.max(0, Math.min(255, (out[i] ?? 0) + Math.round((rand() - 0.5) * 2 * amount)));
  }
  return out;
}

/** Pango markup text needs &, < and > escaped. */
const escape = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The text, rendered by Pango with the item's font file, in `colour`, transparent around it (RGBA PNG). */
async function textLayer(item, colour) {
  const font = FONTS.find((candidate) => candidate.name === item.font) ?? FONTS[0];
  if (!font) throw new Error('no font');
  const markup = `<span foreground="${colour}">${escape(item.lines.join('\n'))}</span>`;
  return sharp({
    text: {
      text: markup,
      font: `${font.name} ${item.size}px`,
      fontfile: font.file,
      rgba: true,
      align: 'centre',
      width: Math.round(item.width * 0.9),
      wrap: 'word',
    },
  })
    .png()
    .toBuffer();
}

/** The image of one item, as PNG (or JPEG when noisy), made the same way on every run. */
async function render(item) {
  const rand = random(item.seed);
  const { width, height } = item;
  const plain = { white: '#ffffff', light: hex(hsl(item.hue, 0.4, 0.88)), dark: '#1c1c24' };
  const ink =
    item.background === 'dark'
      ? '#f4f4f4'
      : item.background === 'colour'
        ? '#ffffff'
        : item.background === 'photo' && item.style !== 'band'
          ? '#ffffff'
          : hex(hsl(item.hue, 0.6, 0.18));
  let text = await textLayer(item, ink);
  if (item.rotate !== 0) {
    text = await sharp(text)
      .rotate(item.rotate, { background: { r: 0, g: 0, b: 0, alpha: 0 } })
      .png()
      .toBuffer();
  }
  let meta = await sharp(text).metadata();
  if ((meta.width ?? 0) > width || (meta.height ?? 0) > height) {
    text = await sharp(text).resize(width, height, { fit: 'inside' }).png().toBuffer();
    meta = await sharp(text).metadata();
  }
  const textWidth = meta.width ?? 0;
  const textHeight = meta.height ?? 0;
  const left = Math.round(item.x * (width - textWidth));
  const top = Math.round(item.y * (height - textHeight));

  let background;
  if (item.background === 'photo') {
    background = sharp(await photoBackground(item, rand), { raw: { width, height, channels: 3 } });
  } else {
    const colour = item.background === 'colour' ? hex(hsl(item.hue, 0.65, 0.42)) : plain[item.background];
    background = sharp({ create: { width, height, channels: 3, background: colour } });
  }
  const layers = [];
  if (item.style === 'shadow') {
    const shadow = await sharp(await textLayer(item, '#000000'))
      .rotate(item.rotate, { background: { r: 0, g: 0, b: 0, alpha: 0 } })
      .resize(textWidth, textHeight, { fit: 'fill' })
      .blur(1.5)
      .png()
      .toBuffer();
    layers.push({
      input: shadow,
      left: Math.min(width - textWidth, left + 2),
      top: Math.min(height - textHeight, top + 2),
    });
  } else if (item.style === 'band') {
    // A light band across the image behind the text, as captions and stickers have.
    const pad = Math.round(item.size * 0.4);
    const bandTop = Math.max(0, top - pad);
    const band = await sharp({
      create: {
        width,
        height: Math.min(height - bandTop, textHeight + 2 * pad),
        channels: 4,
        background: { r: 255, g: 255, b: 255, alpha: 0.75 },
      },
    })
      .png()
      .toBuffer();
    layers.push({ input: band, left: 0, top: bandTop });
  }
  layers.push({ input: text, left, top });
  const composed = await background.composite(layers).removeAlpha().raw().toBuffer();
  const pixels = item.noisy ? grain(composed, rand, 40) : composed;
  const out = sharp(pixels, { raw: { width, height, channels: 3 } });
  return item.noisy ? out.jpeg({ quality: 35 + Math.floor(rand() * 26) }).toBuffer() : out.png().toBuffer();
}

/**
 * The words of `expected` found in `read` (the OCR's text): a word counts when it appears as a whole word, case
 * folded; a phone number when its digits appear in the read text's digits, as the `pii` strategy reads numbers.
 */
function wordsRead(expected, read) {
  const folded = read.toLowerCase();
  const tokens = new Set(folded.split(/[^\p{L}\p{N}@._+-]+/u).map((token) => token.replace(/^[._-]+|[._-]+$/g, '')));
  const allDigits = folded.replace(/\D/g, '');
  return expected.filter((word) =>
    /^\+\d/.test(word) ? allDigits.includes(word.replace(/\D/g, '')) : tokens.has(word.toLowerCase()),
  );
}

async function main() {
  const dir = process.argv[2] || '/tmp/vigil-ocr-set';
  fs.mkdirSync(dir, { recursive: true });
  const all = items();
  for (const item of all) {
    const bytes = await render(item);
    fs.writeFileSync(path.join(dir, `${item.id}.${item.noisy ? 'jpg' : 'png'}`), bytes);
  }
  fs.writeFileSync(path.join(dir, 'labels.json'), `${JSON.stringify(all, null, 2)}\n`);
  process.stdout.write(`${all.length} images and labels.json in ${dir}\n`);
}

module.exports = { items, render, wordsRead, FONTS };

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${err.stack || err.message}\n`);
    process.exit(1);
  });
}
