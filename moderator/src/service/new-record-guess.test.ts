import { recordIdFor } from '@vigil/proto';
import { DEFAULT_RULES, type RuleSet } from '@vigil/proto/rules';
import { MissValve, NewRecordGuess, SeenRecords } from './new-record-guess';

const ids = (count: number, tenantId = 'ten_1') =>
  Array.from({ length: count }, (_, index) => recordIdFor(tenantId, `c-${index}`));

describe('SeenRecords', () => {
  it('knows the records added and no others, the same client id of two tenants apart', () => {
    const seen = new SeenRecords(1000);
    for (const id of ids(100)) seen.add(id);
    expect(ids(100).every((id) => seen.has(id))).toBe(true);
    expect(ids(100, 'ten_2').filter((id) => seen.has(id))).toEqual([]);
  });

  it.each([
    { bound: 10, added: 1000 },
    { bound: 1000, added: 5000 },
    { bound: 100_000, added: 250_000 },
  ])('holds at most $bound keys and the last $bound / 2 at least, after $added records', ({ bound, added }) => {
    const seen = new SeenRecords(bound);
    const all = ids(added);
    let most = 0;
    for (const id of all) {
      seen.add(id);
      most = Math.max(most, seen.size);
    }
    expect(most).toBeLessThanOrEqual(bound);
    expect(all.slice(-bound / 2).every((id) => seen.has(id))).toBe(true);
    // The oldest are forgotten (a few may share a key with a newer one).
    expect(all.slice(0, bound / 2).filter((id) => seen.has(id)).length).toBeLessThan(bound / 20 + 1);
  });

  it('keeps a record added again across the turn of its generation', () => {
    const seen = new SeenRecords(10);
    const [kept, ...others] = ids(30);
    seen.add(kept!);
    for (const id of others) {
      seen.add(id);
      seen.add(kept!);
    }
    expect(seen.has(kept!)).toBe(true);
  });
});

describe('MissValve', () => {
  /** The valve after `outcomes` ('x' an existing record, '.' a new one), and whether it was open before each. */
  const run = (valve: MissValve, outcomes: string) =>
    [...outcomes].map((outcome) => {
      const open = valve.open;
      valve.record(outcome === 'x');
      return open ? 'o' : '-';
    });

  it.each([
    { what: 'stays open below the rate', outcomes: '.x........'.repeat(3), closed: false },
    { what: 'stays open at the rate', outcomes: 'xx........', closed: false },
    { what: 'stays open until enough are known, even if all existed', outcomes: 'xxxx', closed: false },
    { what: 'closes above the rate once enough are known', outcomes: 'xxx.......', closed: true },
    { what: 'closes when the later ones mostly existed', outcomes: '.'.repeat(20) + 'x'.repeat(6), closed: true },
  ])('$what', ({ outcomes, closed }) => {
    const valve = new MissValve(20, 5, 0.2);
    run(valve, outcomes);
    expect(valve.open).toBe(!closed);
  });

  it('closes at the first outcome past the rate and opens again once the existing ones slid out of the window', () => {
    const valve = new MissValve(10, 5, 0.2);
    expect(run(valve, '.....xx').join('')).toBe('ooooooo');
    // 2 of 7 existed (29 %): closed. Outcomes keep coming from the reads made while it is closed.
    expect(valve.open).toBe(false);
    expect(run(valve, '.....').join('')).toBe('---oo');
    // The window is the last 10: 2 existed of 10, open.
    expect(valve.open).toBe(true);
    expect(run(valve, '..........').join('')).toBe('oooooooooo');
    expect(run(valve, 'xxx').join('')).toBe('ooo');
    expect(valve.open).toBe(false);
  });
});

describe('NewRecordGuess', () => {
  const content = { text: 'hello', imageUrls: [], externalUrls: [] };
  const providerRules: RuleSet = {
    rules: [{ id: 'ai', name: 'AI', enabled: true, strategies: [{ type: 'openai', threshold: 0.5 }] }],
  } as unknown as RuleSet;

  it.each([
    { what: 'a record without user or images under in-process rules', input: { content }, guess: true },
    { what: 'a record with a user', input: { content, user: { clientId: 'u' } }, guess: true },
    {
      what: 'a record with an image',
      input: { content: { ...content, imageUrls: ['https://x/y.png'] } },
      guess: false,
    },
    { what: 'a record under rules that call a provider', input: { content }, rules: providerRules, guess: false },
  ])('guesses $what: $guess', ({ input, rules, guess }) => {
    const plan = new NewRecordGuess().plan(recordIdFor('ten_1', 'a'), input, rules ?? DEFAULT_RULES);
    expect(plan).toEqual({ candidate: guess, guess });
  });

  it('guesses no more for a record it moderated or found to exist, nor learns from it', () => {
    const guesser = new NewRecordGuess({ window: 10, minObserved: 1, maxMissRate: 0.2 });
    const [moderated, existing, fresh] = ids(3);
    guesser.moderated(moderated!);
    guesser.learnt(existing!, true);
    expect(guesser.plan(moderated!, { content }, DEFAULT_RULES)).toEqual({ candidate: false, guess: false });
    expect(guesser.plan(existing!, { content }, DEFAULT_RULES)).toEqual({ candidate: false, guess: false });
    // One record of one known existed (100 %): the valve is closed, the new record is still a candidate.
    expect(guesser.plan(fresh!, { content }, DEFAULT_RULES)).toEqual({ candidate: true, guess: false });
    for (const id of ids(9, 'ten_2')) guesser.learnt(id, false);
    expect(guesser.plan(fresh!, { content }, DEFAULT_RULES)).toEqual({ candidate: true, guess: true });
  });
});
