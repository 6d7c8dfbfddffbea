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
});
