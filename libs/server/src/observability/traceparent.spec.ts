import { formatTraceparent, parseTraceparent } from './traceparent.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('traceparent', () => {
  it('reads a valid header, sampled or not', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, spanId: SPAN, traceFlags: 1 });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)).toEqual({ traceId: TRACE, spanId: SPAN, traceFlags: 0 });
    // A later version may carry more fields; only the known prefix counts.
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-03-extra`)).toEqual({ traceId: TRACE, spanId: SPAN, traceFlags: 1 });
  });

  it.each([
    ['absent', undefined],
    ['not a string', ['a', 'b']],
    ['empty', ''],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version 00 with extra fields', `00-${TRACE}-${SPAN}-01-x`],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['garbage', 'hello'],
  ])('ignores a malformed header: %s', (_label, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });

  it('writes version 00', () => {
    expect(formatTraceparent(TRACE, SPAN, 1)).toBe(`00-${TRACE}-${SPAN}-01`);
    expect(formatTraceparent(TRACE, SPAN, 0)).toBe(`00-${TRACE}-${SPAN}-00`);
  });
});
