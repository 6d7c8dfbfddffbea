import { COLLECTIONS, LIMITS } from '@vigil/proto';
import { RULE_PRESETS } from '@vigil/proto/rules';
import { startGateway, type Gateway } from './harness';

let gw: Gateway;
let off: Gateway;

beforeAll(async () => {
  [gw, off] = await Promise.all([
    startGateway({ promptRulesEnabled: true, rateLimitPoints: 0 }),
    startGateway({ rateLimitPoints: 0 }),
  ]);
});
afterAll(async () => {
  await Promise.all([gw.close(), off.close()]);
});

interface RuleView {
  id: string;
  presetId?: string;
  presetVersion?: number;
  strategies: Array<{ type: string; topic?: string; prompt?: string }>;
}
const rulesOf = (body: unknown) => (body as { rules: RuleView[] }).rules;
const promptRule = { id: 'p', name: 'P', strategies: [{ type: 'prompt', topic: 'spam', prompt: 'Flag spam.' }] };

describe('rule presets', () => {
  it('lists at least adult content, spam, harassment, scams/phishing, self-harm and contact details, each versioned', async () => {
    const { key } = await gw.newTenant();
    const reply = await gw.request('GET', '/api/v1/rules/presets', { key });
    expect(reply.status).toBe(200);
    const presets = (reply.body as { presets: Array<{ id: string; version: number; strategies: unknown[] }> }).presets;
    expect(presets.map((preset) => preset.id)).toEqual(
      expect.arrayContaining([
        'adult-content',
        'spam',
        'harassment',
        'scams-phishing',
        'self-harm',
        'contact-details',
        'text-in-images',
      ]),
    );
    for (const preset of presets) {
      expect(preset.version).toBeGreaterThanOrEqual(1);
      if (preset.id === 'contact-details' || preset.id === 'text-in-images') continue;
      expect(preset.strategies[0]).toEqual(expect.objectContaining({ type: 'prompt', skipImages: false }));
    }
    // Contact details are judged in process, every category, with the masked text answered.
    expect(presets.find((preset) => preset.id === 'contact-details')?.strategies).toEqual([
      {
        type: 'pii',
        categories: ['phone', 'email', 'handle', 'address', 'payment', 'asking'],
        mask: true,
        regions: [],
      },
    ]);
    // Text in images turns on reading the images' text, which the rule set's text strategies then judge.
    expect(presets.find((preset) => preset.id === 'text-in-images')?.strategies).toEqual([
      { type: 'image-text', onTimeout: 'ignore' },
    ]);
    // Adult content judges the record's images with the bundled model too.
    expect(presets.find((preset) => preset.id === 'adult-content')?.strategies).toEqual([
      expect.objectContaining({ type: 'prompt' }),
      { type: 'images', thresholds: { Porn: 0.8, Hentai: 0.8 }, onFetchError: 'ignore' },
    ]);
  });

  it("adds a preset as the tenant's own rule with presetVersion, after the rules it had", async () => {
    const { key } = await gw.newTenant();
    const reply = await gw.request('POST', '/api/v1/rules/presets/spam', { key });
    expect(reply.status).toBe(201);
    const rules = rulesOf((await gw.request('GET', '/api/v1/rules', { key })).body);
    expect(rules.map((rule) => rule.id)).toEqual(['profanity', 'spam']);
    const spam = RULE_PRESETS.find((preset) => preset.id === 'spam');
    expect(rules[1]).toMatchObject({ presetId: 'spam', presetVersion: spam?.version, strategies: spam?.strategies });
  });

  it("never shares a preset: a tenant's edit or delete leaves the preset and other tenants' copies alone", async () => {
    const [first, second] = await Promise.all([gw.newTenant(), gw.newTenant()]);
    for (const { key } of [first, second]) {
      expect((await gw.request('POST', '/api/v1/rules/presets/harassment', { key })).status).toBe(201);
    }
    const copy = rulesOf((await gw.request('GET', '/api/v1/rules', { key: first.key })).body);
    copy[1]!.strategies[0]!.prompt = 'Changed by the first tenant.';
    expect((await gw.request('PUT', '/api/v1/rules', { key: first.key, body: { rules: copy } })).status).toBe(200);
    expect((await gw.request('PUT', '/api/v1/rules', { key: first.key, body: { rules: [] } })).status).toBe(200);

    const original = RULE_PRESETS.find((preset) => preset.id === 'harassment');
    const others = rulesOf((await gw.request('GET', '/api/v1/rules', { key: second.key })).body);
    expect(others[1]?.strategies).toEqual(original?.strategies);
    const listed = (await gw.request('GET', '/api/v1/rules/presets', { key: first.key })).body as {
      presets: Array<{ id: string; strategies: unknown }>;
    };
    expect(listed.presets.find((preset) => preset.id === 'harassment')?.strategies).toEqual(original?.strategies);
  });

  it('returns 404 not_found for an unknown preset', async () => {
    const { key } = await gw.newTenant();
    const reply = await gw.request('POST', '/api/v1/rules/presets/no-such-preset', { key });
    expect(reply.status).toBe(404);
    expect(reply.body.error).toMatchObject({ code: 'not_found' });
  });

  it('returns 409 conflict when the rule set already has the preset', async () => {
    const { key } = await gw.newTenant();
    expect((await gw.request('POST', '/api/v1/rules/presets/self-harm', { key })).status).toBe(201);
    const reply = await gw.request('POST', '/api/v1/rules/presets/self-harm', { key });
    expect(reply.status).toBe(409);
    expect(reply.body.error).toMatchObject({ code: 'conflict' });
    // A refused add takes no version number (a tenant's numbers are bounded): the next write is version 2.
    const next = await gw.request('PUT', '/api/v1/rules', { key, body: { rules: [] } });
    expect(next.body).toMatchObject({ version: 2 });
  });

  it('returns 409 limit_exceeded when the rule set is full', async () => {
    const { key } = await gw.newTenant();
    const rules = Array.from({ length: LIMITS.rules }, (_, index) => ({
      id: `r${index}`,
      name: 'R',
      strategies: [{ type: 'blocklist', words: ['x'] }],
    }));
    expect((await gw.request('PUT', '/api/v1/rules', { key, body: { rules } })).status).toBe(200);
    const reply = await gw.request('POST', '/api/v1/rules/presets/spam', { key });
    expect(reply.status).toBe(409);
    expect(reply.body.error).toMatchObject({ code: 'limit_exceeded' });
  });

  it('returns 400 validation_error for a prompt strategy without topic or with an over-long prompt', async () => {
    const { key } = await gw.newTenant();
    const tooLong = 'x'.repeat(LIMITS.promptText + 1);
    for (const strategy of [
      { type: 'prompt', prompt: 'Flag spam.' },
      { type: 'prompt', topic: 'spam', prompt: tooLong },
    ]) {
      const body = { rules: [{ ...promptRule, strategies: [strategy] }] };
      const reply = await gw.request('PUT', '/api/v1/rules', { key, body });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({ code: 'validation_error' });
    }
  });

  it('returns 400 prompt_rules_disabled for prompt rules and presets when the deployment has no LLM', async () => {
    const { key } = await off.newTenant();
    const put = await off.request('PUT', '/api/v1/rules', { key, body: { rules: [promptRule] } });
    expect(put.status).toBe(400);
    expect(put.body.error).toMatchObject({ code: 'prompt_rules_disabled' });
    const add = await off.request('POST', '/api/v1/rules/presets/spam', { key });
    expect(add.status).toBe(400);
    expect(add.body.error).toMatchObject({ code: 'prompt_rules_disabled' });
    expect(rulesOf((await off.request('GET', '/api/v1/rules', { key })).body).map((rule) => rule.id)).toEqual([
      'profanity',
    ]);
  });
});

describe('concurrent changes to rules and settings', () => {
  it('lands every preset added at once, and refuses a second add of the same one', async () => {
    const { key } = await gw.newTenant();
    const ids = RULE_PRESETS.map((preset) => preset.id);
    const replies = await Promise.all(
      [...ids, ids[0]!].map((id) => gw.request('POST', `/api/v1/rules/presets/${id}`, { key })),
    );
    expect(replies.map((reply) => reply.status).sort()).toEqual([...ids.map(() => 201), 409].sort());
    const stored = rulesOf((await gw.request('GET', '/api/v1/rules', { key })).body).map((rule) => rule.id);
    expect(stored.sort()).toEqual(['profanity', ...ids].sort());
  });

  it('lands every settings change made at once', async () => {
    const { key } = await gw.newTenant();
    const patches = [
      { testMode: true },
      { suspensionThreshold: 7 },
      { rolloutPercentage: 40 },
      { emails: { enabled: true } },
      { emails: { templates: { Banned: { subject: 'Banned', heading: 'Banned', body: 'You are banned.' } } } },
    ];
    const replies = await Promise.all(patches.map((body) => gw.request('PATCH', '/api/v1/settings', { key, body })));
    expect(replies.map((reply) => reply.status)).toEqual(patches.map(() => 200));
    const settings = (await gw.request('GET', '/api/v1/settings', { key })).body as Record<string, unknown>;
    expect(settings).toMatchObject({
      testMode: true,
      suspensionThreshold: 7,
      rolloutPercentage: 40,
      emails: { enabled: true, templates: { Banned: { subject: 'Banned' } } },
    });
  });

  it('lands a change whose writer stopped after claiming its revision, before the next change', async () => {
    const { key, tenantId } = await gw.newTenant();
    expect((await gw.request('PATCH', '/api/v1/settings', { key, body: { testMode: true } })).status).toBe(200);
    // Revision 2 claimed, never written: as if its gateway stopped in between.
    const stored = await gw.db
      .collection<{ _id: string; epoch?: string; revision?: number }>(COLLECTIONS.settings)
      .findOne({ _id: tenantId });
    expect(stored).toMatchObject({ revision: 1, epoch: expect.any(String) });
    await gw.db.collection<{ _id: string; [field: string]: unknown }>(COLLECTIONS.configRevisions).insertOne({
      _id: `settings:${tenantId}@${stored!.epoch!}#2`,
      epoch: stored!.epoch,
      revision: 2,
      content: { testMode: true, rolloutPercentage: 10 },
      createdAt: new Date(),
    });
    const reply = await gw.request('PATCH', '/api/v1/settings', { key, body: { suspensionThreshold: 3 } });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ testMode: true, rolloutPercentage: 10, suspensionThreshold: 3 });
  });

  it('builds on a document an earlier release wrote without revisions, not on claims made before it', async () => {
    const { key, tenantId } = await gw.newTenant();
    expect((await gw.request('PATCH', '/api/v1/settings', { key, body: { testMode: true } })).status).toBe(200);
    // An earlier release's gateway (a rolling upgrade, a rollback) replaces the document the way it always did.
    await gw.db
      .collection<{ _id: string; [field: string]: unknown }>(COLLECTIONS.settings)
      .replaceOne({ _id: tenantId }, { testMode: false, rolloutPercentage: 55, updatedAt: new Date() });
    const reply = await gw.request('PATCH', '/api/v1/settings', { key, body: { suspensionThreshold: 4 } });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ testMode: false, rolloutPercentage: 55, suspensionThreshold: 4 });
    const again = await gw.request('PATCH', '/api/v1/settings', { key, body: { rolloutPercentage: 60 } });
    expect(again.body).toMatchObject({ testMode: false, rolloutPercentage: 60, suspensionThreshold: 4 });
  });
});
