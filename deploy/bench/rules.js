'use strict';
// `npm run bench -- rules`: what the rule set budget bounds, measured in process (no stack needed):
// - the gateway's event-loop time to take a PUT /rules body (JSON.parse and the schema, budget and pattern compilation
//   included) for the heaviest bodies the budget admits and for ones it refuses; target < 200 ms;
// - the moderator's time to judge a 100,000-character record under the heaviest admitted sets, on the first record (a
//   worker compiling the set) and after; target well within the moderation deadline (5 s) and the record budget (2 s).
const { performance } = require('node:perf_hooks');
const { RuleSet } = require('../../proto/dist/rules');
const { createEngine } = require('../../moderator/dist/engine');

const RUNS = 5;

const rule = (id, strategies) => ({ id, name: id, strategies });
const patterns = (id, list) => rule(id, [{ type: 'patterns', patterns: list }]);
const heavy = (i) => `[a-z]{1,240}${i}q`;
const words = (n, prefix = 'word') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const domains = (n) => Array.from({ length: n }, (_, i) => `${'d'.repeat(60)}${i}.example.com`);

const bodies = {
  'admitted: 20 heavy patterns (9,640 RE2 instructions)': {
    rules: [
      patterns(
        'p',
        Array.from({ length: 20 }, (_, i) => heavy(i)),
      ),
    ],
  },
  'admitted: 500 patterns of 20 instructions': {
    rules: Array.from({ length: 3 }, (_, r) =>
      patterns(
        `p${r}`,
        Array.from({ length: r < 2 ? 200 : 100 }, (_, i) => `(foo|bar)${r}x${i}\\d+`),
      ),
    ),
  },
  'admitted: 1,000 words, 10,000 domains, 100 rules with descriptions (~1 MB)': {
    rules: Array.from({ length: 100 }, (_, r) => ({
      ...rule(`r${r}`, [
        { type: 'blocklist', words: words(10, `w${r}x`), wholeWord: true, profanity: true },
        { type: 'links', blockedDomains: domains(100) },
      ]),
      description: 'x'.repeat(2000),
    })),
  },
  'refused: the probe, 10 rules x 200 heavy patterns': {
    rules: Array.from({ length: 10 }, (_, r) =>
      patterns(
        `r${r}`,
        Array.from({ length: 200 }, (_, i) => heavy(r * 200 + i)),
      ),
    ),
  },
  'refused: 500 patterns that do not compile': {
    rules: Array.from({ length: 3 }, (_, r) =>
      patterns(
        `p${r}`,
        Array.from({ length: r < 2 ? 200 : 100 }, (_, i) => `[a-z]{1,1000}(${i}`),
      ),
    ),
  },
  'refused: 500 patterns of 2,001 instructions': {
    rules: Array.from({ length: 3 }, (_, r) =>
      patterns(
        `p${r}`,
        Array.from({ length: r < 2 ? 200 : 100 }, (_, i) => `[a-z]{1,1000}${r}x${i}`),
      ),
    ),
  },
};

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  process.stdout.write('PUT /rules validation (JSON.parse + schema), event-loop milliseconds\n');
  for (const [name, body] of Object.entries(bodies)) {
    const text = JSON.stringify(body);
    const times = [];
    let ok;
    for (let run = 0; run < RUNS; run += 1) {
      const started = performance.now();
      ok = RuleSet.safeParse(JSON.parse(text)).success;
      times.push(performance.now() - started);
    }
    process.stdout.write(
      `  ${name}: ${(text.length / 1024).toFixed(1)} KB, ${ok ? 'accepted' : 'refused'}, ` +
        `first ${(times[0] ?? NaN).toFixed(0)} ms, median ${median(times).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms\n`,
    );
  }

  process.stdout.write('Judging a 100,000-character record under the heaviest admitted sets (one thread)\n');
  const engine = createEngine({});
  const sets = {
    '20 heavy patterns + 1,000 whole words + profanity': [
      patterns(
        'p',
        Array.from({ length: 20 }, (_, i) => heavy(i)),
      ),
      rule('w', [{ type: 'blocklist', words: words(1000), wholeWord: true, profanity: true }]),
    ],
    // Most patterns (each reads every field whole): 500 scans of the record.
    '500 patterns of 20 instructions': bodies['admitted: 500 patterns of 20 instructions'].rules,
    '1,000 substring words': [
      rule('w', [{ type: 'blocklist', words: words(1000), wholeWord: false, profanity: false }]),
    ],
  };
  const texts = {
    'repeated letters': 'a'.repeat(100_000),
    'a hit at the start': `word999 ${'a'.repeat(99_992)}`,
    prose: Array.from({ length: 20_000 }, (_, i) => ['river', 'market', 'sunny', 'word'][i % 4])
      .join(' ')
      .slice(0, 100_000),
  };
  for (const [setName, rules] of Object.entries(sets)) {
    const ruleSet = RuleSet.parse({ rules });
    for (const [textName, text] of Object.entries(texts)) {
      const input = { entity: 'post', name: 'n', text, imageUrls: [], externalUrls: [] };
      const times = [];
      for (let run = 0; run < RUNS; run += 1) {
        // A fresh copy is a set the engine has not compiled yet only the first time (compiled sets are found by content).
        const started = performance.now();
        await engine.moderate(input, run === 0 ? structuredClone(ruleSet) : ruleSet);
        times.push(performance.now() - started);
      }
      process.stdout.write(
        `  ${setName}, ${textName}: first ${(times[0] ?? NaN).toFixed(0)} ms, then median ${median(times.slice(1)).toFixed(0)} ms\n`,
      );
    }
  }
}

module.exports = { main };
