/** Jest asymmetric matchers the suites share. */

/**
 * Matches the retryAfter of a call denied some time after its window of `interval` seconds opened
 * in an earlier request: the seconds left, a whole number in [interval - 10, interval] (at least 1).
 * A loaded CI machine has taken two seconds between two requests, so exactly `interval` is not
 * guaranteed there; a denial in the request that opened the window is asserted exactly instead.
 */
export function secondsLeftOf(interval: number) {
  const lowest = Math.max(1, interval - 10);
  return {
    $$typeof: Symbol.for('jest.asymmetricMatcher'),
    asymmetricMatch: (value: unknown) => Number.isInteger(value) && (value as number) >= lowest && (value as number) <= interval,
    toAsymmetricMatcher: () => `an integer in [${lowest}, ${interval}]`,
  };
}
