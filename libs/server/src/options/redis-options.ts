import type { JsonRpcRedisOptions, ResolvedJsonRpcOptions } from './json-rpc-options.js';
import { check, type OptionProblems } from './option-checks.js';
import { OptionSection } from './option-section.js';

export const DEFAULT_REDIS_KEY_PREFIX = 'nest-jsonrpc:';

const REDIS_URL = /^rediss?:\/\//;

type Cluster = NonNullable<JsonRpcRedisOptions['cluster']>;

const clusterSection = new OptionSection<Cluster, Cluster>('redis.cluster', {
  nodes: {
    required: true,
    check: (problems, label, nodes) => {
      if (!Array.isArray(nodes) || nodes.length === 0 || !nodes.every((n) => typeof n === 'string' && REDIS_URL.test(n))) {
        problems.push(`${label} must be a non-empty array of redis:// or rediss:// URLs`);
      }
    },
    doc: 'some nodes of the cluster (the rest are discovered); credentials and TLS are taken from the first URL',
  },
});

/** The `redis` section; `url` and `cluster` (one of the two) are checked together by `resolveRedisOptions`. */
const redisSection = new OptionSection<JsonRpcRedisOptions, { url?: string; cluster?: Cluster; keyPrefix: string }>('redis', {
  url: { doc: '`redis://host:port/db` (or `rediss://`): one Redis node' },
  cluster: { doc: '`{ nodes: [url, …] }`: a Redis Cluster' },
  keyPrefix: { default: DEFAULT_REDIS_KEY_PREFIX, check: check.string, doc: 'prefix of every key written, so apps can share one Redis' },
});

export function resolveRedisOptions(redis: JsonRpcRedisOptions | undefined, problems: OptionProblems): ResolvedJsonRpcOptions['redis'] {
  if (redis === undefined || !redisSection.checkKeys(redis, problems)) return undefined;
  const { url, cluster, keyPrefix } = redisSection.resolve(redis, problems);
  if (cluster !== undefined) {
    if (url !== undefined) problems.push('"redis" takes "url" (one node) or "cluster", not both');
    if (!clusterSection.checkKeys(cluster, problems)) return undefined;
    return { cluster: clusterSection.resolve(cluster, problems), keyPrefix };
  }
  if (typeof url !== 'string' || !REDIS_URL.test(url)) problems.push('"redis.url" must be a redis:// or rediss:// URL (or give "redis.cluster")');
  return { url: url!, keyPrefix };
}
