/**
 * A Map that forgets its oldest entry once it holds `maxEntries`, used as the Keyv store of the
 * in-process result cache: Keyv drops expired entries only when they are read, so without a bound
 * a client sending ever-new params would grow memory without limit. Insertion order is the
 * eviction order (a re-set entry moves to the back); that is enough for a TTL cache.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly maxEntries: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (super.has(key)) super.delete(key);
    else if (this.size >= this.maxEntries) {
      const oldest = this.keys().next();
      if (!oldest.done) super.delete(oldest.value);
    }
    return super.set(key, value);
  }
}
