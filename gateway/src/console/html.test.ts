import { html, raw, safeLink } from './html';

describe('html', () => {
  it('escapes interpolated text, attributes included', () => {
    const name = `<script>alert("x")</script>' onload='`;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;">' +
        '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;</p>',
    );
  });

  it('nests fragments and lists without escaping them twice, and drops null, undefined and false', () => {
    const items = ['a&b', 'c'].map((item) => html`<li>${item}</li>`);
    expect(
      html`<ul>
        ${items}${null}${undefined}${false}${raw('<hr>')}
      </ul>`.value.replace(/>\s+</g, '><'),
    ).toBe('<ul><li>a&amp;b</li><li>c</li><hr></ul>');
  });

  it.each([['javascript:alert(1)'], ['data:text/html,<b>x</b>'], ['not a url']])(
    'shows %p as text, not as a link',
    (url) => {
      expect(safeLink(url).value).not.toContain('href');
    },
  );

  it('links http(s) URLs without handing the opener over', () => {
    expect(safeLink('https://cdn.example.com/a.png?x="1"').value).toBe(
      '<a href="https://cdn.example.com/a.png?x=%221%22" rel="noopener noreferrer nofollow" target="_blank">' +
        'https://cdn.example.com/a.png?x=&quot;1&quot;</a>',
    );
  });
});
