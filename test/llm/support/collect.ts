/** Drains an event stream, keeping the events and the error it ended with (if any). */
export async function collect<T>(stream: AsyncIterable<T>): Promise<{ events: T[]; error?: any }> {
  const events: T[] = [];
  try {
    for await (const event of stream) events.push(event);
    return { events };
  } catch (error) {
    return { events, error };
  }
}
