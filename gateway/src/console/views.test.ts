import { html } from './html';
import { dataTable, imageScores } from './views';

/** The table's text, tags dropped and whitespace collapsed. */
const textOf = (markup: string) =>
  markup
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

describe('imageScores', () => {
  it('shows the text read in each image beside its scores, escaped, or why none was read', () => {
    const markup =
      imageScores([
        { position: 1, scores: { Neutral: 0.9, Porn: 0.1 }, text: 'call <me> on kik' },
        { position: 2, scores: { Neutral: 1 }, textFailure: 'timeout' },
        { position: 3, failure: 'refused' },
      ])?.value ?? '';
    expect(markup).toContain('<th>Text read</th>');
    expect(markup).toContain('call &lt;me&gt; on kik');
    expect(textOf(markup)).toContain('2 – – 1.00 – – not read (timeout)');
    expect(textOf(markup)).toContain('3 not judged (refused) none');
  });

  it('shows only the text when no image was judged by the model, and no text column when none was read', () => {
    const read = imageScores([{ position: 1, text: 'casino bonus' }])?.value ?? '';
    expect(read).not.toContain('<th>Neutral</th>');
    expect(textOf(read)).toBe('Images Image Text read 1 casino bonus');
    const judged = imageScores([{ position: 1, scores: { Neutral: 1 } }])?.value ?? '';
    expect(judged).toContain('<th>Neutral</th>');
    expect(judged).not.toContain('Text read');
    expect(imageScores([])).toBeNull();
  });
});

describe('dataTable', () => {
  it('writes one header cell per heading, escaped, and the rows as they are', () => {
    const markup = dataTable(
      ['Name', '', 'A <b>'],
      [
        html`<tr>
          <td>x</td>
        </tr>`,
        html`<tr>
          <td>y</td>
        </tr>`,
      ],
    ).value;
    expect(markup).toMatch(/^<table>/);
    expect(markup.match(/<th>(.*?)<\/th>/g)).toEqual(['<th>Name</th>', '<th></th>', '<th>A &lt;b&gt;</th>']);
    expect(textOf(markup)).toBe('Name A &lt;b&gt; x y');
  });

  it('sets the class and the keyboard attribute only when asked', () => {
    expect(dataTable(['A'], [], { className: 'inbox', keyboardRows: true }).value).toMatch(
      /^<table class="inbox" data-keyboard="rows">/,
    );
    expect(dataTable(['A'], [], { className: 'policies' }).value).toMatch(/^<table class="policies">/);
  });
});
