import { EndpointBreakers } from './endpoint-breakers';

describe('EndpointBreakers', () => {
  it('keeps full concurrency through four failures in a row', () => {
    const breakers = new EndpointBreakers();
    for (let i = 0; i < 4; i += 1) breakers.failed('we_1', 0);
    expect(breakers.allowed('we_1', 0, 16)).toBe(16);
  });

  it('pauses an endpoint after five failures, then allows one probe, and doubles the pause after it fails', () => {
    const breakers = new EndpointBreakers();
    for (let i = 0; i < 5; i += 1) breakers.failed('we_1', 0);
    expect(breakers.allowed('we_1', 999, 16)).toBe(0);
    expect(breakers.allowed('we_1', 1000, 16)).toBe(1);
    breakers.failed('we_1', 1000);
    expect(breakers.allowed('we_1', 2999, 16)).toBe(0);
    expect(breakers.allowed('we_1', 3000, 16)).toBe(1);
    expect(breakers.allowed('we_2', 0, 16)).toBe(16);
  });

  it('pauses a minute at most, and closes on a success', () => {
    const breakers = new EndpointBreakers();
    for (let i = 0; i < 40; i += 1) breakers.failed('we_1', 0);
    expect(breakers.allowed('we_1', 59_999, 16)).toBe(0);
    expect(breakers.allowed('we_1', 60_000, 16)).toBe(1);
    expect(breakers.succeeded('we_1')).toBe(true);
    expect(breakers.allowed('we_1', 0, 16)).toBe(16);
    expect(breakers.succeeded('we_1')).toBe(false);
  });

  it('parks an open breaker’s backlog an hour ahead, with probes a longest pause apart at most, pausing or probing', () => {
    const breakers = new EndpointBreakers();
    for (let i = 0; i < 4; i += 1) breakers.failed('we_1', 0);
    expect(breakers.pause('we_1', 0)).toBeUndefined();
    breakers.failed('we_1', 0);
    expect(breakers.pause('we_1', 500)).toEqual({ until: 1000, backlogUntil: 3_600_500, probeEveryMs: 60_000 });
    // Probing (the pause is over): still open.
    expect(breakers.pause('we_1', 2000)).toMatchObject({ until: 1000 });
    breakers.succeeded('we_1');
    expect(breakers.pause('we_1', 2000)).toBeUndefined();
  });
});
