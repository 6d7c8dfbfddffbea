import { DEFAULT_EMAIL_TEMPLATES, EmailTemplate, unknownPlaceholders } from '@vigil/proto';
import { REPORTER_EMAIL_TEMPLATES, emailKindFor } from '../email/email-kinds';
import { renderEmail } from './email-render';

describe('renderEmail', () => {
  const template = {
    subject: 'Hi {{username}}\r\nBcc: evil@example.com',
    heading: 'Account of {{ username }}',
    body: 'Hello {{username}} & welcome to {{platformName}}.\nSecond line.\n\nAppeal: {{appealUrl}}',
  };

  it('fills placeholders and folds the subject to one line', () => {
    const out = renderEmail(template, { username: 'ann', platformName: 'Acme', appealUrl: 'https://x/appeal?t=1' });
    expect(out.subject).toBe('Hi ann Bcc: evil@example.com');
    expect(out.text).toContain('Hello ann & welcome to Acme.\nSecond line.');
    expect(out.text).toContain('Appeal: https://x/appeal?t=1');
  });

  it('escapes the template text and the values in the HTML part', () => {
    const out = renderEmail(
      { ...template, body: '<b>{{username}}</b>' },
      { username: '<script>alert(1)</script>', platformName: 'A&B' },
    );
    expect(out.html).toContain('&lt;b&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;/b&gt;');
    expect(out.html).not.toContain('<script>');
  });

  it('never expands a placeholder that arrives inside a value', () => {
    const out = renderEmail(template, { username: '{{appealUrl}}', appealUrl: 'https://x' });
    expect(out.subject).toBe('Hi {{appealUrl}} Bcc: evil@example.com');
  });

  it('adds the appeal link after the body when the template does not place it', () => {
    const out = renderEmail(DEFAULT_EMAIL_TEMPLATES.Suspended, { appealUrl: 'https://gw/appeal?token=a"b' });
    expect(out.text).toContain('To appeal this decision, visit: https://gw/appeal?token=a"b');
    expect(out.html).toContain('<a href="https://gw/appeal?token=a&quot;b">');
  });

  it("puts a reporter's outcome after the body, escaped, and words the complaint link as one", () => {
    const out = renderEmail(
      REPORTER_EMAIL_TEMPLATES.ReportDecided,
      { platformName: 'Acme', appealUrl: 'https://gw/complaint?token=t' },
      [],
      {
        outcome: ['Decision: no action was taken.', 'Reason: <b>fine</b>'],
        link: { text: 'To complain about this decision, visit:', label: 'Complain about this decision' },
      },
    );
    expect(out.subject).toBe('Your report to Acme was decided');
    expect(out.text).toContain('Decision: no action was taken.\nReason: <b>fine</b>');
    expect(out.text).toContain('To complain about this decision, visit: https://gw/complaint?token=t');
    expect(out.text).not.toContain('To appeal');
    expect(out.html).toContain('<p>Reason: &lt;b&gt;fine&lt;/b&gt;</p>');
    expect(out.html).toContain('>Complain about this decision</a>');
  });

  it('renders unknown values as empty', () => {
    expect(renderEmail(DEFAULT_EMAIL_TEMPLATES.Banned, {}).subject).toBe('Your account has been banned');
  });
});

describe('email templates', () => {
  it.each([
    ['{{username}} {{ appealUrl }}', []],
    ['{{user}} and {{ password }}', ['user', 'password']],
  ])('finds unknown placeholders in %s', (text, unknown) => {
    expect(unknownPlaceholders(text)).toEqual(unknown);
  });

  it('refuses a template with an unknown placeholder', () => {
    expect(EmailTemplate.safeParse({ subject: 's', heading: 'h', body: '{{email}}' }).success).toBe(false);
  });

  it.each([
    ['Suspended', 'Compliant', 'Suspended'],
    ['Banned', 'Suspended', 'Banned'],
    ['Compliant', 'Suspended', 'Compliant'],
    ['Compliant', 'Banned', undefined],
    ['Compliant', null, undefined],
    // A status confirmed by hand: the user already had the email.
    ['Suspended', 'Suspended', undefined],
    ['Banned', 'Banned', undefined],
  ] as const)('status %s after %s sends %s', (status, previous, kind) => {
    expect(emailKindFor(status, previous)).toBe(kind);
  });
});
