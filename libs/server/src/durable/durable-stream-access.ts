import { Inject, Injectable } from '@nestjs/common';
import type { DurableStreamStatus } from '@nest-jsonrpc/protocol';
import { callerRoles, callerUserId } from '../context/caller-identity.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import { OPTIONS_SECTION } from '../options/option-section-tokens.js';
import { RpcPipeline } from '../pipeline/rpc-pipeline.js';
import type { DurableStreamRecord } from '../stream-stores/stream-store.js';
import { DurableStreamRunner } from './durable-stream-runner.js';

/** Who is asking, for ownership and role checks on the REST routes. */
export interface DurableCaller {
  /** The caller's id (`security.userIdResolver`, else `user.id`, `sub`, `username`); null when anonymous. */
  owner: string | null;
  roles: readonly string[];
}

export type DurableAccess =
  | { ok: true; record: DurableStreamRecord }
  | { ok: false; status: 404 | 410; message: string }
  /** The stream exists and is the caller's, but its method's roles rule refuses the caller's roles: `method` names that method. */
  | { ok: false; status: 403; message: string; method: string };

const LIST_LIMIT = 1000;

/**
 * Who may see which durable stream, with the same identity the calls use: a stream of another
 * user does not exist for the caller; one deleted or past retention is gone; one whose method
 * needs roles the caller lacks is denied — by the method's own roles rule, the one its calls pass.
 */
@Injectable()
export class DurableStreamAccess {
  /** @internal */
  constructor(
    @Inject(OPTIONS_SECTION.security) private readonly security: ResolvedJsonRpcOptions['security'],
    private readonly runner: DurableStreamRunner,
    private readonly pipeline: RpcPipeline,
  ) {}

  /** `request`: the platform's request (its `user`), as the app's guards see it. */
  callerOf(request: unknown): DurableCaller {
    const { userIdResolver, rolesResolver } = this.security;
    return { owner: callerUserId(request, userIdResolver) ?? null, roles: callerRoles(request, rolesResolver) };
  }

  /** Whether `caller` may see stream `id`: 404 (not theirs, or none), 410 (past retention), 403 (roles). */
  async access(id: string, caller: DurableCaller, now = Date.now()): Promise<DurableAccess> {
    const found = await this.runner.bounded(this.runner.store.lookup(id));
    if (found.found === 'none') return { ok: false, status: 404, message: 'Stream not found' };
    const owner = found.found === 'stream' ? found.record.owner : found.owner;
    if (owner !== null && owner !== caller.owner) return { ok: false, status: 404, message: 'Stream not found' };
    if (found.found === 'expired' || this.expired(found.record, now)) return { ok: false, status: 410, message: 'Stream expired: past retention' };
    const denial = this.roleDenial(found.record.method, caller.roles);
    if (denial) return { ok: false, status: 403, message: denial, method: found.record.method };
    return { ok: true, record: found.record };
  }

  /** The caller's streams, newest first; anonymous callers have none to list. */
  async list(caller: DurableCaller, status: DurableStreamStatus | undefined): Promise<DurableStreamRecord[]> {
    if (caller.owner === null) return [];
    const now = Date.now();
    const records = await this.runner.bounded(this.runner.store.list(caller.owner, status, LIST_LIMIT));
    return records.filter((r) => !this.expired(r, now) && this.roleDenial(r.method, caller.roles) === undefined);
  }

  private expired(record: DurableStreamRecord, now: number): boolean {
    return record.completedAt !== null && record.completedAt + this.runner.retention <= now;
  }

  /** Why `roles` may not touch a stream of `method` (its roles rule), or undefined. */
  private roleDenial(method: string, roles: readonly string[]): string | undefined {
    return this.pipeline.accessRuleOf(method)?.denial(roles);
  }
}
