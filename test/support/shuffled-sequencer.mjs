/**
 * A jest test sequencer that runs the selected files in a random order, reproducible from
 * `JEST_SHUFFLE_SEED` (printed at start). Used by `scripts/loop-suites.sh` to run the Redis
 * suites many times among the others, in a different position each run — the scaled-out
 * Redis flake once fixed in test/durable/redis-scaled-out.e2e-spec.ts only showed when that suite ran late in a worker.
 */
import Sequencer from '@jest/test-sequencer';
import { seededRandom } from './seeded-random.mjs';

const BaseSequencer = Sequencer.default ?? Sequencer;

export default class ShuffledSequencer extends BaseSequencer {
  sort(tests) {
    const seed = Number(process.env.JEST_SHUFFLE_SEED ?? Date.now() % 2 ** 31);
    process.stderr.write(`shuffled-sequencer: JEST_SHUFFLE_SEED=${seed}\n`);
    const random = seededRandom(seed);
    const shuffled = [...tests];
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
    }
    return shuffled;
  }
}
