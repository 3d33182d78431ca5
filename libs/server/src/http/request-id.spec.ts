import { requestIdOf, newRequestId } from './request-id.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('request ids', () => {
  it('a new id is a random (version 4) UUID, distinct across many random batches', () => {
    // 1,000 ids span eight refills of the random pool (128 per refill).
    const ids = Array.from({ length: 1_000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(UUID_V4);
    expect(new Set(ids).size).toBe(ids.length);
    // Every random position takes many values: no byte is stuck or copied from the last id.
    for (const position of [0, 7, 9, 15, 20, 24, 35]) {
      expect(new Set(ids.map((id) => id[position])).size).toBeGreaterThanOrEqual(12);
    }
    // The variant's high bits leave four values (8, 9, a, b), and all of them occur.
    expect(new Set(ids.map((id) => id[19]))).toEqual(new Set(['8', '9', 'a', 'b']));
  });

  it('an id handed out stays what it was when the next ones are made', () => {
    const first = newRequestId();
    const copy = `${first}`;
    for (let i = 0; i < 300; i++) newRequestId();
    expect(first).toBe(copy);
  });

  it("the client's sane X-Request-Id is kept; a missing, repeated or unprintable one is replaced", () => {
    expect(requestIdOf({ 'x-request-id': 'trace-42/abc' })).toBe('trace-42/abc');
    expect(requestIdOf({})).toMatch(UUID_V4);
    expect(requestIdOf({ 'x-request-id': 'has space' })).toMatch(UUID_V4);
    expect(requestIdOf({ 'x-request-id': 'x'.repeat(201) })).toMatch(UUID_V4);
    expect(requestIdOf({ 'x-request-id': ['a', 'b'] as unknown as string })).toMatch(UUID_V4);
  });
});
