import { RpcMemoryThrottlerStorage } from './rpc-memory-throttler-storage.js';

describe('RpcMemoryThrottlerStorage', () => {
  it('counts a fixed window and reports the time left', () => {
    const s = new RpcMemoryThrottlerStorage();
    const t0 = 1_000_000;
    expect(s.incrementNow('k', 10_000, 2, 0, t0)).toEqual({ totalHits: 1, timeToExpire: 10, isBlocked: false, timeToBlockExpire: 0 });
    expect(s.incrementNow('k', 10_000, 2, 0, t0 + 1000).isBlocked).toBe(false);
    expect(s.incrementNow('k', 10_000, 2, 0, t0 + 2500)).toEqual({ totalHits: 3, timeToExpire: 8, isBlocked: true, timeToBlockExpire: 8 });
    expect(s.incrementNow('k', 10_000, 2, 0, t0 + 10_000)).toEqual({ totalHits: 1, timeToExpire: 10, isBlocked: false, timeToBlockExpire: 0 });
  });

  it('blocks for blockDuration once over, without counting blocked calls', () => {
    const s = new RpcMemoryThrottlerStorage();
    s.incrementNow('k', 1000, 1, 5000, 0);
    expect(s.incrementNow('k', 1000, 1, 5000, 10)).toMatchObject({ isBlocked: true, timeToBlockExpire: 5 });
    expect(s.incrementNow('k', 1000, 1, 5000, 3000)).toMatchObject({ isBlocked: true, totalHits: 2, timeToBlockExpire: 3 });
    expect(s.incrementNow('k', 1000, 1, 5000, 5011)).toMatchObject({ isBlocked: false, totalHits: 1 });
  });

  it('keys are independent and expired windows are swept', () => {
    const s = new RpcMemoryThrottlerStorage();
    for (let i = 0; i < 4000; i++) s.incrementNow(`old${i}`, 10, 1, 0, 0);
    for (let i = 0; i < 200; i++) s.incrementNow(`new${i}`, 10, 1, 0, 100);
    expect(s.size).toBeLessThan(300);
    expect(s.incrementNow('new199', 10, 1, 0, 105).totalHits).toBe(2);
  });
});
