import { ActivityGate } from './activity-gate';

describe('ActivityGate', () => {
  it('is busy while any work is in flight, and tells its listeners once, when the last leaves', () => {
    const gate = new ActivityGate();
    const heard: string[] = [];
    expect(gate.busy).toBe(false);
    const first = gate.enter();
    const second = gate.enter();
    gate.onceIdle(() => heard.push('a'));
    const cancel = gate.onceIdle(() => heard.push('cancelled'));
    cancel();
    first();
    first(); // a second call of the same leave counts once
    expect(gate.busy).toBe(true);
    expect(heard).toEqual([]);
    second();
    expect(gate.busy).toBe(false);
    expect(heard).toEqual(['a']);
    gate.enter()();
    expect(heard).toEqual(['a']);
  });

  it('tells whether work was in flight within a time window', () => {
    const gate = new ActivityGate();
    expect(gate.activeWithin(1000)).toBe(false);
    const leave = gate.enter();
    expect(gate.activeWithin(1000, Date.now() + 60_000)).toBe(true);
    leave();
    expect(gate.activeWithin(1000)).toBe(true);
    expect(gate.activeWithin(1000, Date.now() + 2000)).toBe(false);
  });

  it('tells its change listeners each time it turns busy and idle, until they unsubscribe', () => {
    const gate = new ActivityGate();
    const heard: boolean[] = [];
    const unsubscribe = gate.onChange((busy) => heard.push(busy));
    const first = gate.enter();
    const second = gate.enter();
    first();
    expect(heard).toEqual([true]);
    second();
    expect(heard).toEqual([true, false]);
    gate.enter()();
    expect(heard).toEqual([true, false, true, false]);
    unsubscribe();
    gate.enter()();
    expect(heard).toEqual([true, false, true, false]);
  });
});
