import { encodeDurableEventsPage, type DurableEventsPage, type DurableStreamEvent } from './durable.js';

describe('encodeDurableEventsPage', () => {
  it('is the JSON text of a DurableEventsPage, each stored data text spliced in as it is', () => {
    const stored: DurableStreamEvent[] = [
      { id: 1, event: 'chunk', data: '{"n":1,"text":"a \\"quoted\\" word"}' },
      { id: 2, event: 'progress', data: '[1,2]' },
      { id: 3, event: 'done', data: '{}' },
    ];
    const text = encodeDurableEventsPage(stored);
    const page: DurableEventsPage = JSON.parse(text);
    expect(page).toEqual({ events: stored.map((e) => ({ id: e.id, event: e.event, data: JSON.parse(e.data) })) });
    expect(text).toContain('"data":{"n":1,"text":"a \\"quoted\\" word"}');
    expect(encodeDurableEventsPage([])).toBe('{"events":[]}');
  });
});
