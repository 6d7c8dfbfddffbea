/** Word lists of the contact-detail detector; all lower case, as folded text is. */

/** Apps named with a handle; the ambiguous ones are ordinary words too and need a stronger sign (see detect.ts). */
export const CLEAR_APPS = [
  'snapchat',
  'snap',
  'instagram',
  'insta',
  'ig',
  'telegram',
  'whatsapp',
  'kik',
  'discord',
  'wechat',
  'skype',
  'tiktok',
  'viber',
  'threema',
  'onlyfans',
] as const;
export const AMBIGUOUS_APPS = [
  'sc',
  'tg',
  'wa',
  'line',
  'signal',
  'fb',
  'facebook',
  'messenger',
  'twitter',
  'x',
] as const;

/** Spelled digits read inside a run of digits ("five five five 0 1 9 9"); "oh" only after a digit. */
export const DIGIT_WORDS: ReadonlyMap<string, string> = new Map([
  ['zero', '0'],
  ['oh', '0'],
  ['one', '1'],
  ['two', '2'],
  ['three', '3'],
  ['four', '4'],
  ['five', '5'],
  ['six', '6'],
  ['seven', '7'],
  ['eight', '8'],
  ['nine', '9'],
]);

/** Words that separate digits when spelled out ("555 dash 0199"). */
export const SEPARATOR_WORDS: ReadonlySet<string> = new Set(['dot', 'dash', 'hyphen', 'space']);

/**
 * Common words that are not handles ("my insta is private", "snap me later"): a handle that is one of them counts
 * only when written with @.
 */
export const COMMON_WORDS: ReadonlySet<string> = new Set(
  `a about above after again against all also always am an and any anyone anything are around as ask asked at away
  back bad be because been before being below best better between big both broken busy but by can cant cannot come
  could dead did didnt do does doesnt doing done dont down during each either else empty enough even ever every
  everyone everything few find first follow for from fun funny gone good got great had has hasnt have havent having
  he her here hers him his how i if im in into is isnt it its just know last later let like little lol long look
  lot lots made make many maybe me mine more most much must my myself need never new next nice no nope not nothing
  now of off often ok okay old on once one only open or other our out over own people please post posted posting
  private public quick quickly real really right same say see seen send sent she should since so some someone
  something soon still story stories such sure take than thanks that the their them then there these they thing
  things this those though through to today together tomorrow tonight too under until up us use used very via wait
  want was wasnt way we well went were what when where which while who why will with without wont would yeah yes
  yesterday yet you your yours ur u r pls plz thx ty haha hahaha lmao omg idk tbh btw rn asap account acc name
  username user id handle page profile message messages msg dm dms pic pics photo photos video videos reel reels
  live call calls chat group app update updated down up banned blocked hacked deleted suspended verified
  filter filters streak streaks stuff too though though anyway anyways again always later earlier`.split(/\s+/u),
);

/** Words that, just before a number, say it is not a phone ("order 55512345", "ticket no. 4412 5567"). */
export const NOT_A_PHONE_BEFORE =
  /(?:order|ref|reference|invoice|tracking|ticket|id|account|acct|sku|model|serial|confirmation|booking|case|receipt|transaction|isbn|part|item|version|build|policy|claim|member|membership|customer|flight|room|table|seat|code|pin|zip|postcode|population|score|page|chapter|lot|batch|shipment|parcel|package|route|bus|train|platform|gate|v)\s{0,2}(?:no\.?|nr\.?|number|num|#|:|is|was)?\s{0,2}[:#]?\s{0,2}$/u;

/** Words between a house number and a street type that say it is not an address ("3 miles down the road"). */
export const NOT_IN_ADDRESS: ReadonlySet<string> = new Set(
  `the a an of to from down up on in at and or is are was miles mile mi km kms minutes minute mins min hours hour hrs
  times blocks block steps people cars houses feet ft meters metres yards doors lanes more other way ways kids years
  days weeks my your our their his her its this that these those go going went walk walked drive drove`.split(/\s+/u),
);
