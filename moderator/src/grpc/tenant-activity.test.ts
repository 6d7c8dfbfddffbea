import { TenantActivity } from './tenant-activity';

describe('TenantActivity', () => {
  it('tells whether another tenant has a call in flight, never counting the asking tenant', () => {
    const activity = new TenantActivity();
    expect(activity.othersBusy('a')).toBe(false);
    const a = activity.enter('a');
    expect(activity.othersBusy('a')).toBe(false);
    expect(activity.othersBusy('b')).toBe(true);
    const b1 = activity.enter('b');
    const b2 = activity.enter('b');
    b1();
    b1(); // a second call of the same leave counts once
    expect(activity.othersBusy('a')).toBe(true);
    b2();
    expect(activity.othersBusy('a')).toBe(false);
    a();
    expect(activity.othersBusy('b')).toBe(false);
  });

  it('waits for the other tenants to leave, at most its bound, and stops on its signal', async () => {
    const activity = new TenantActivity();
    await expect(activity.othersIdle('a', 60_000)).resolves.toBe('idle');
    const b = activity.enter('b');
    const own = activity.enter('a');
    let outcome: string | undefined;
    const waiting = activity.othersIdle('a', 60_000).then((result) => (outcome = result));
    own(); // the asking tenant's own calls do not end the wait
    await Promise.resolve();
    expect(outcome).toBeUndefined();
    b();
    await expect(waiting).resolves.toBe('idle');

    const c = activity.enter('c');
    await expect(activity.othersIdle('a', 0)).resolves.toBe('bound');
    await expect(activity.othersIdle('a', 20)).resolves.toBe('bound');
    const controller = new AbortController();
    const aborted = activity.othersIdle('a', 60_000, controller.signal);
    controller.abort();
    await expect(aborted).resolves.toBe('aborted');
    c();
  });
});
