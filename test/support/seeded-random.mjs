/**
 * mulberry32: a tiny seeded PRNG, so "random" choices (chunkings, test orders) are the same on
 * every run with the same seed and a failure can be replayed. Plain JavaScript so the jest test
 * sequencer (loaded untransformed) can use it too.
 * @param {number} seed
 * @returns {() => number} numbers in [0, 1)
 */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
