import { PII_CATEGORIES } from './pattern';
import type { Rule } from './rules';

/**
 * A ready-made rule a tenant can add by id (`POST /api/v1/rules/presets/{id}`). Adding one copies it into the
 * tenant's own rule set with `presetId` and `presetVersion`: presets are read-only data in code, never rows shared
 * across tenants, so removing or editing a tenant's copy cannot touch the preset or anyone else's copy. Changing a
 * preset's text means bumping its `version`; copies made before keep the text they were made with.
 */
export interface RulePreset {
  id: string;
  version: number;
  name: string;
  description: string;
  strategies: Rule['strategies'];
}

const preset = (
  id: string,
  version: number,
  name: string,
  description: string,
  topic: string,
  prompt: string,
  extra: Rule['strategies'] = [],
) =>
  Object.freeze({
    id,
    version,
    name,
    description,
    strategies: Object.freeze([
      Object.freeze({ type: 'prompt' as const, topic, prompt, skipImages: false }),
      ...extra.map((strategy) => Object.freeze(strategy)),
    ]) as Rule['strategies'],
  });

export const RULE_PRESETS: readonly RulePreset[] = Object.freeze([
  // Version 2: the record's images are judged too, by the prompt's vision model and by the bundled image model
  // (which flags only where the moderator runs it, IMAGE_THREADS).
  preset(
    'adult-content',
    2,
    'Adult content',
    'Sexually explicit material and offers of sexual services.',
    'adult content',
    [
      'Flag content that is sexually explicit: descriptions or depictions of sexual acts, pornography, or offers to',
      'sell or exchange sexual content or services. Any sexual content involving minors is always flagged.',
      'Do not flag nudity in an artistic, educational, medical or news context, romance without explicit detail,',
      'sexual health information, or discussion of relationships.',
    ].join(' '),
    [{ type: 'images', thresholds: { Porn: 0.8, Hentai: 0.8 }, onFetchError: 'ignore' }],
  ),
  preset(
    'spam',
    1,
    'Spam',
    'Unsolicited, repetitive or deceptive promotion.',
    'spam',
    [
      'Flag content whose main purpose is unsolicited promotion: repeated advertising, link farming, keyword',
      'stuffing, chain messages, or content unrelated to its context that pushes a product, service or site.',
      'Flag only clear, overwhelming cases. Do not flag a single relevant mention of a product or link, users',
      'describing their own work where that is expected, or ordinary announcements.',
    ].join(' '),
  ),
  preset(
    'harassment',
    1,
    'Harassment',
    'Abuse, threats or intimidation aimed at a person or group.',
    'harassment',
    [
      'Flag content that targets a person or group with abuse: threats, intimidation, sustained insults, encouraging',
      'others to attack someone, sharing private information to expose someone, or demeaning people for a',
      'protected characteristic. Do not flag disagreement, criticism of ideas or public conduct, mild rudeness,',
      'banter between participants, or reports and discussion of harassment.',
    ].join(' '),
  ),
  preset(
    'scams-phishing',
    1,
    'Scams and phishing',
    'Attempts to deceive people out of money, credentials or personal data.',
    'scams and phishing',
    [
      'Flag content that tries to deceive people into giving money, passwords, payment details or personal data:',
      'impersonating a company or authority, fake prizes or refunds, advance-fee offers, guaranteed-return',
      'investments, or links disguised as a login or payment page. Do not flag legitimate offers, warnings about',
      'scams, or ordinary requests for contact details in a normal transaction.',
    ].join(' '),
  ),
  preset(
    'self-harm',
    1,
    'Self-harm',
    'Content that encourages or instructs self-harm or suicide.',
    'self-harm',
    [
      'Flag content that encourages, glorifies or gives instructions for suicide, self-injury or eating disorders,',
      'or that pressures someone to harm themselves. Do not flag people talking about their own struggles or',
      'recovery, support and prevention resources, or news, education and fiction that does not encourage harm.',
    ].join(' '),
  ),
  // Judged in process by the moderator's detector (docs/engine.md, "Contact details"): no LLM needed.
  Object.freeze({
    id: 'contact-details',
    version: 1,
    name: 'Contact details (off-platform)',
    description:
      'Phone numbers, emails, messenger handles, street addresses and payment details given in a message, and ' +
      'requests for them, found through common disguises; POST /moderate answers the text with them masked.',
    strategies: Object.freeze([
      Object.freeze({ type: 'pii' as const, categories: [...PII_CATEGORIES], mask: true, regions: [] as string[] }),
    ]) as unknown as Rule['strategies'],
  }),
  // Read by the moderator's OCR in its image threads (docs/engine.md, "Text in images"): no LLM needed, and every text
  // rule of the tenant's set then judges each image's text as a field of its own.
  Object.freeze({
    id: 'text-in-images',
    version: 1,
    name: 'Text in images',
    description:
      "Reads the text written in a record's images, so that the blocklists, patterns, links, contact details and " +
      'prompt rules of the rule set judge it too; a reason names the image ("Image 2\'s text contains ...").',
    strategies: Object.freeze([
      Object.freeze({ type: 'image-text' as const, onTimeout: 'ignore' as const }),
    ]) as unknown as Rule['strategies'],
  }),
]);

export function findPreset(id: string): RulePreset | undefined {
  return RULE_PRESETS.find((candidate) => candidate.id === id);
}

/** The tenant's own copy of a preset, as a rule of its rule set: plain fresh objects, nothing shared. */
export function ruleFromPreset(preset: RulePreset): Rule {
  return {
    id: preset.id,
    name: preset.name,
    description: preset.description,
    enabled: true,
    entities: [],
    strategies: structuredClone(preset.strategies),
    presetId: preset.id,
    presetVersion: preset.version,
  };
}
