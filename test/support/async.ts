/** Waiting in tests. Prefer a signal to a sleep when checking that something did NOT happen. */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 10 ms until it returns a truthy value, which it returns; fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | Promise<T>,
  timeoutMs = 5000,
  what = 'condition',
  /** What the timeout message reports as seen last (say, the actual value the check compared). */
  lastSeen?: () => string,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastSeen ? `; last seen: ${lastSeen()}` : ''}`);
    await sleep(10);
  }
}

/** The error `promise` rejects with, checked to be a `type` (fails the test when it resolves or rejects otherwise). */
export async function rejectionOf<E>(promise: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  return error as E;
}
