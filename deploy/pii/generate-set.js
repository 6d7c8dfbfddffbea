'use strict';
// `node deploy/pii/generate-set.js`: writes the labelled chat lines of the `pii` strategy
// (moderator/src/engine/pii/labelled-set.json) from templates with a fixed seed, plus the hand-written lines of
// deploy/pii/hand-written.json. Half the lines give or ask for contact details (a third of those obfuscated), half are
// hard negatives: prices, dates, times, order numbers, versions, business addresses in prose, app names in passing.
const fs = require('node:fs');
const path = require('node:path');
const { random } = require('../bench/seeded-random');

const SEED = 20240611;
const PER_SIDE = 500;

const rand = random(SEED);
/** @template T @param {readonly T[]} list @returns {T} */
const pick = (list) => /** @type {T} */ (list[Math.floor(rand() * list.length)]);
const int = (min, max) => min + Math.floor(rand() * (max - min + 1));
const digits = (n) => Array.from({ length: n }, () => String(int(0, 9))).join('');

const AREA = ['212', '415', '312', '617', '206', '303', '404', '512', '646', '718', '213', '305', '702', '801'];
const usNumber = () => [pick(AREA), String(int(201, 989)).replace(/11$/, '12'), digits(4)];
const ukNumber = () => [`07${pick(['911', '456', '812', '700', '534', '384'])}`.slice(0, 5), digits(6)];
const NAMES = ['jenny', 'mike', 'sara', 'alex', 'tom', 'lily', 'omar', 'nina', 'jake', 'emma', 'leo', 'zoe', 'ravi'];
const handle = () =>
  `${pick(NAMES)}${pick(['_', '.', '', ''])}${pick(['x', 'xo', 'rose', 'j', 'official', 'k'])}${int(1, 99)}`;
const DOMAINS = ['gmail.com', 'yahoo.com', 'outlook.com', 'proton.me', 'hotmail.co.uk', 'icloud.com', 'mail.ru'];

const SPELL = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const spell = (text) => [...text].map((c) => (/\d/.test(c) ? SPELL[Number(c)] : c)).join(' ');
const fullwidth = (text) => text.replace(/[0-9a-z@.]/gi, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
const keycaps = (text) => text.replace(/\d/g, (c) => `${c}\ufe0f\u20e3`);
const LOOK = { a: 'а', e: 'е', o: 'о', p: 'р', c: 'с', x: 'х', i: 'і', s: 'ѕ' };
const homoglyph = (text) => text.replace(/[aeopcxis]/g, (c) => (rand() < 0.5 ? LOOK[c] : c));

const phoneForms = {
  plain: () => {
    const [a, b, c] = usNumber();
    return pick([`${a}${b}${c}`, `${a}-${b}-${c}`, `(${a}) ${b}-${c}`, `${a}.${b}.${c}`, `+1 ${a} ${b} ${c}`]);
  },
  uk: () => {
    const [a = '', b = ''] = ukNumber();
    return pick([`${a} ${b}`, `+44 ${a.slice(1)} ${b}`, `${a}${b}`]);
  },
  intl: () =>
    pick([
      `+33 6 ${digits(2)} ${digits(2)} ${digits(2)} ${digits(2)}`,
      `+49 151 ${digits(4)} ${digits(4)}`,
      `+91 9${digits(4)} ${digits(5)}`,
      `+61 4${digits(2)} ${digits(3)} ${digits(3)}`,
    ]),
};
const obfuscatedPhone = () => {
  const [a, b, c] = usNumber();
  const whole = `${a}${b}${c}`;
  return pick([
    () => spell(whole),
    () => `${spell(a)}, ${spell(b)}, ${spell(c)}`,
    () => [...whole].join(' '),
    () => [...whole].join('.'),
    () => `${a}\n${b}\n${c}`,
    () => fullwidth(`${a} ${b} ${c}`),
    () => keycaps(whole),
    () => `${a} ${spell(b)} ${c}`,
    () => `${a} dash ${b} dash ${c}`,
  ])();
};

const PHONE_LINES = [
  (p) => `call me at ${p}`,
  (p) => `my number is ${p}`,
  (p) => `text me ${p} after 6`,
  (p) => `hit me up ${p}`,
  (p) => `${p} thats my cell`,
  (p) => `reach me on ${p} anytime`,
  (p) => `whatsapp me ${p}`,
  (p) => `ok here: ${p}`,
  (p) => `my phone ${p} dont share it`,
  (p) => `u can call ${p} tonight`,
];
const EMAIL_LINES = [
  (e) => `email me at ${e}`,
  (e) => `my email is ${e}`,
  (e) => `send it to ${e} pls`,
  (e) => `${e} is my address`,
  (e) => `contact: ${e}`,
  (e) => `drop me a line at ${e}`,
];
const email = () => `${pick(NAMES)}${pick(['.', '_', ''])}${pick(NAMES)}${int(1, 999)}@${pick(DOMAINS)}`;
const obfuscatedEmail = () => {
  const local = `${pick(NAMES)}${int(1, 99)}`;
  const [name = '', tld = ''] = pick(DOMAINS).split(/\.(.*)/);
  return pick([
    () => `${local} at ${name} dot ${tld.replace('.', ' dot ')}`,
    () => `${local}(at)${name}(dot)${tld.replace('.', '(dot)')}`,
    () => `${local} [at] ${name} [dot] ${tld.replace('.', ' [dot] ')}`,
    () => `${local} @ ${name} . ${tld}`,
    () => homoglyph(`${local}@${name}.${tld}`),
    () => fullwidth(`${local}@${name}.${tld}`),
    () => `${local} at gmail`,
  ])();
};
const APPS = [
  'snap',
  'snapchat',
  'insta',
  'ig',
  'instagram',
  'telegram',
  'tg',
  'whatsapp',
  'kik',
  'discord',
  'wechat',
  'skype',
  'tiktok',
  'line id',
  'signal',
];
const HANDLE_LINES = [
  (app, h) => `${app}: ${h}`,
  (app, h) => `my ${app} is ${h}`,
  (app, h) => `add me on ${app} ${h}`,
  (app, h) => `${app} @${h}`,
  (app, h) => `@${h} on ${app.replace(' id', '')}`,
  (app, h) => `find me on ${app} - ${h}`,
  (app, h) => `${app} id ${h} add me`,
  (app, h) => `hmu ${app} ${h}`,
];
const obfuscatedHandle = () => {
  const h = handle();
  return pick([
    () => `${homoglyph(pick(['snap', 'insta', 'kik', 'discord']))}: ${h}`,
    () => `${pick(['s n a p', 'i n s t a', 'sn@p', 'ins7a'])} ${h}`,
    () => fullwidth(`snap ${h}`),
    () => `my ${pick(['snap', 'insta'])} is ${homoglyph(h)}`,
    () => `${pick(['tele gram', 'telegrm', 'wh@tsapp'])} ${h}`,
  ])();
};
const STREETS = ['Baker', 'Maple', 'Oak', 'Elm', 'Main', 'Cedar', 'High', 'Church', 'Park', 'Mill'];
const TYPES = ['Street', 'St', 'Avenue', 'Ave', 'Road', 'Rd', 'Lane', 'Drive', 'Court', 'Blvd'];
const address = () => `${int(1, 9999)} ${pick(STREETS)} ${pick(TYPES)}`;
const ADDRESS_LINES = [
  (a) => `I live at ${a}`,
  (a) => `my address is ${a}, apt ${int(1, 40)}`,
  (a) => `come over to ${a} tonight`,
  (a) => `meet me at ${a}`,
  (a) => `ship it to ${a}, Springfield, IL 62704`,
  (a) => `send it to ${a} unit ${int(1, 20)}`,
  (a) => `my place is ${a}`,
  (a) => `pick me up at ${a}`,
];
const CARDS = [
  '4111 1111 1111 1111',
  '5500 0000 0000 0004',
  '3400 000000 00009',
  '4012888888881881',
  '6011 1111 1111 1117',
  '5105-1051-0510-5100',
];
const IBANS = [
  'DE89 3704 0044 0532 0130 00',
  'GB82 WEST 1234 5698 7654 32',
  'FR14 2004 1010 0505 0001 3M02 606',
  'NL91ABNA0417164300',
  'ES91 2100 0418 4502 0005 1332',
];
const PAYMENT_LINES = [
  (p) => `send the money to ${p}`,
  (p) => `my card is ${p}`,
  (p) => `pay me here ${p}`,
  (p) => `IBAN ${p} thanks`,
  (p) => `transfer to ${p} and ill ship`,
];
const ASKING_LINES = [
  "what's your snap?",
  'whats ur number',
  'send me your number',
  'give me your email',
  'can i get your insta',
  'what is your whatsapp',
  'do you have telegram?',
  'add me on snap',
  'dm me on insta',
  'text me on whatsapp',
  'lets move this to telegram',
  'u got kik?',
  'drop your number',
  "what's your discord",
  'can i have your phone number',
  'give me ur snap',
  'whats your email address',
  'hmu on snap',
  'we should talk on whatsapp',
  'send me ur cell',
];
const obfuscatedAsking = () =>
  pick([
    () => `whats ur ${homoglyph('snap')}`,
    () => fullwidth('send me your number'),
    () => `what's your ${pick(['s.n.a.p', 'sn4p', 'numb3r', 'ins ta'])}`,
    () => `add me on ${homoglyph('insta')}`,
  ])();

const NEGATIVE_LINES = [
  () => `it costs $${int(1, 9)},${digits(3)}.${digits(2)}`,
  () => `price dropped to €${int(10, 999)}.${digits(2)} today`,
  () => `paid ${int(1000, 99999)} dollars for it`,
  () => `meeting on ${int(2019, 2026)}-0${int(1, 9)}-${int(10, 28)} at ${int(1, 12)}:${int(10, 59)}`,
  () => `due ${int(10, 28)}/0${int(1, 9)}/${int(2019, 2026)}`,
  () => `see you ${int(10, 28)}.0${int(1, 9)}.${int(2019, 2026)}`,
  () => `order #A${digits(5)} shipped`,
  () => `order number ${usNumber().join('')} is delayed`,
  () => `tracking 1Z${digits(3)}AA${digits(10)}`,
  () => `ticket no. ${digits(8)}`,
  () => `invoice ${digits(9)} attached`,
  () => `back in ${int(1970, 2020)} we had ${int(2, 30)} kids on the team`,
  () => `bought ${int(2, 40)} eggs and ${int(2, 12)} apples`,
  () => `update to version ${int(1, 12)}.${int(0, 9)}.${digits(5)}.${digits(4)}`,
  () => `v${int(1, 9)}.${int(0, 20)}.${int(0, 9)} fixed the bug`,
  () => `we won ${int(0, 9)}-${int(0, 9)} last night`,
  () => `server at ${int(10, 192)}.${int(0, 255)}.${int(0, 255)}.${int(0, 255)} is down`,
  () => `the city has ${int(1, 9)},${digits(3)},${digits(3)} people`,
  () => `ISBN 978-${int(0, 9)}-${digits(2)}-${digits(6)}-${int(0, 9)}`,
  () => `the museum at ${int(100, 1200)} Fifth Avenue is open late`,
  () => `their HQ is at ${int(1, 500)} ${pick(STREETS)} ${pick(TYPES)} downtown`,
  () => `the store on ${pick(STREETS)} Street closes at ${int(5, 10)}`,
  () => `I ran ${int(2, 12)} miles down the road`,
  () => `it's ${int(2, 9)} blocks down ${pick(STREETS)} Ave`,
  () => `I posted it on ${pick(['insta', 'snap', 'tiktok'])} yesterday`,
  () => `${pick(['snap', 'insta', 'discord', 'telegram'])} is down again`,
  () => `my insta is private now`,
  () => `wait in line for ${int(2, 40)} minutes`,
  () => `look at that dot on the map`,
  () => `meet at noon at the cafe`,
  () => `what's your favorite number`,
  () => `what's your number one tip for beginners`,
  () => `my email got hacked lol`,
  () => `give me your opinion on this`,
  () => `what's your name?`,
  () => `text me when you get home`,
  () => `my phone died at 3%`,
  () => `score was ${digits(3)} to ${digits(3)}`,
  () => `${int(2, 9)} ${pick(['kids', 'cats', 'cars'])} and ${int(2, 9)} dogs`,
  () => `call of duty season ${int(1, 9)} is out`,
  () => `room ${digits(3)}, floor ${int(1, 30)}`,
  () => `model ${digits(8)} is out of stock`,
  () => `zip ${digits(5)} only`,
  () => `card ending in ${digits(4)}`,
  () => `pin is wrong again lol`,
  () => `one two three four go`,
  () => `I have ${int(2, 9)} or ${int(2, 9)} ideas`,
  () => `the signal is weak here`,
  () => `the line was ${int(2, 50)} people long`,
  () => `that was a ${int(3, 4)} way call`,
  () => `flight ${pick(['BA', 'UA', 'LH'])}${digits(4)} lands at ${int(1, 12)}:${int(10, 59)}`,
  () => `lol ${digits(4)} likes in ${int(2, 9)} hours`,
  () => `follow the ${pick(['discord', 'snap', 'insta'])} rules`,
  () => `chapter ${int(1, 30)} page ${int(10, 400)}`,
  () => `temperature was ${int(10, 40)}.${int(0, 9)} degrees`,
  () => `account settings > privacy > ${pick(['email', 'phone'])}`,
  () => `at least ${int(2, 9)} dot points please`,
  () => `I'm at work, back at ${int(1, 12)}`,
  () => `population ${digits(10)}`,
  () => `serial ${digits(12)}`,
];

/** @type {{ text: string, positive: boolean, category?: string, obfuscated?: boolean, source: string }[]} */
const lines = [];
/** @type {[string, () => string, () => string, ((text: string) => string)[] | undefined][]} */
const positives = [
  [
    'phone',
    () => pick(PHONE_LINES)(pick([phoneForms.plain, phoneForms.uk, phoneForms.intl])()),
    obfuscatedPhone,
    PHONE_LINES,
  ],
  ['email', () => pick(EMAIL_LINES)(email()), obfuscatedEmail, EMAIL_LINES],
  ['handle', () => pick(HANDLE_LINES)(pick(APPS), handle()), obfuscatedHandle, undefined],
  ['address', () => pick(ADDRESS_LINES)(address()), () => pick(ADDRESS_LINES)(fullwidth(address())), undefined],
  [
    'payment',
    () => pick(PAYMENT_LINES)(pick([...CARDS, ...IBANS])),
    () => pick(PAYMENT_LINES)(spell(pick(CARDS))),
    undefined,
  ],
  ['asking', () => pick(ASKING_LINES), obfuscatedAsking, undefined],
];
const hand = JSON.parse(fs.readFileSync(path.join(__dirname, 'hand-written.json'), 'utf8'));
for (const line of hand) lines.push({ ...line, source: 'hand' });
const handPositives = hand.filter((line) => line.positive).length;
const handNegatives = hand.length - handPositives;
for (let i = 0; i < PER_SIDE - handPositives; i += 1) {
  const kind = positives[i % positives.length];
  if (!kind) throw new Error('no template');
  const [category, plain, obfuscated, wrappers] = kind;
  // Two in five: with the hand-written lines, which are mostly plain, a third of the positives are obfuscated.
  const isObfuscated = i % 5 < 2;
  let text = isObfuscated ? obfuscated() : plain();
  if (isObfuscated && wrappers) text = pick(wrappers)(text);
  lines.push({ text, positive: true, category, obfuscated: isObfuscated, source: 'template' });
}
for (let i = 0; i < PER_SIDE - handNegatives; i += 1) {
  const negative = NEGATIVE_LINES[i % NEGATIVE_LINES.length] ?? (() => '');
  lines.push({ text: negative(), positive: false, source: 'template' });
}

const out = path.resolve(__dirname, '../../moderator/src/engine/pii/labelled-set.json');
fs.writeFileSync(out, `${JSON.stringify({ seed: SEED, lines }, null, 2)}\n`);
process.stdout.write(`${lines.length} lines written to ${path.relative(process.cwd(), out)}\n`);
