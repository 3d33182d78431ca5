import { MemoryResultStore } from './result-stores.js';

describe('MemoryResultStore', () => {
  it('expires entries and bounds its size', async () => {
    const store = new MemoryResultStore(3);
    store.set('a', '1', 20);
    expect(store.get('a')).toBe('1');
    await new Promise((r) => setTimeout(r, 30));
    expect(store.get('a')).toBeUndefined();
    for (const k of ['b', 'c', 'd', 'e']) store.set(k, k, 60_000);
    expect(store.size).toBe(3);
    expect(store.get('b')).toBeUndefined();
    expect(store.get('e')).toBe('e');
  });
});
