import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { RpcMetadataAccessor } from './rpc-metadata-accessor.js';

type Handler = (...args: unknown[]) => unknown;
type OriginalClass = { readonly prototype: object; readonly name: string };

/** One `@RpcMethod` of a host: where its decorators are, and the function that answers it. */
export interface RpcHostMethod {
  readonly methodKey: string;
  /** The decorated method (where `@RpcMethod` and the enhancer decorators put their metadata). */
  readonly declared: Handler;
  /**
   * The function called: `declared` itself, or — when a subclass overrides the method, or the
   * provider was replaced by a plain object or a factory's value — a function that calls that
   * method and carries `declared`'s metadata, so the enhancers read the same decorators.
   */
  readonly handler: Handler;
}

/** A provider or controller whose methods are routed, resolved the way they are called. */
export interface RpcMethodHost {
  /** Hosts with the same key are one: a class provided twice is routed once. */
  readonly key: object;
  /** The class Nest sees (class-level enhancers, parameter metadata). */
  readonly classRef: { readonly name: string };
  /** Where the parameters' `design:paramtypes` are read. */
  readonly prototype: object;
  /** The object Nest calls the handler on; undefined for a request-scoped provider (resolved per request). */
  readonly instance: object | undefined;
  readonly methods: readonly RpcHostMethod[];
  /** Methods that cannot be routed (a replacement without the method), for the startup error. */
  readonly problems: readonly string[];
}

/**
 * Resolves a provider or controller into the methods to route. A provider is normally an instance
 * of the class that declares its methods (or of a subclass, which inherits them even where it
 * overrides one without repeating the decorators). In tests it may be replaced under the same
 * token — `overrideProvider(X).useValue(...)`, `.useClass(...)`, `.useFactory(...)` — by
 * something that is not an X: the methods are then X's, each answered by the replacement's method
 * of the same name, and Nest is shown X (its class-level guards and parameter metadata still
 * apply). A replacement without one of the methods is a startup problem, never a silent -32601.
 */
export function rpcMethodHostOf(wrapper: InstanceWrapper, metadata: RpcMetadataAccessor, isScoped: boolean): RpcMethodHost | undefined {
  if (wrapper.isAlias) return undefined;
  const original = typeof wrapper.token === 'function' ? (wrapper.token as OriginalClass) : undefined;
  const fromClass = !wrapper.isNotMetatype && typeof wrapper.metatype === 'function';
  const value = wrapper.instance as unknown;
  // A value or factory that provides no object (null, say, for a feature that is off) routes nothing.
  if (!fromClass && !isScoped && (value === null || typeof value !== 'object')) return undefined;
  const implementation: object | undefined = fromClass
    ? (wrapper.metatype as { prototype: object }).prototype
    : value !== null && typeof value === 'object'
      ? (Object.getPrototypeOf(value) ?? undefined)
      : undefined;
  const replacedBy = replacementOf(wrapper, fromClass);
  const plain = original !== undefined && replacedBy !== undefined && !(implementation !== undefined && inChain(original.prototype, implementation));
  const prototype = plain ? original.prototype : implementation;
  if (prototype === undefined) return undefined;

  const chains = plain && implementation !== undefined ? [implementation, original.prototype] : [prototype];
  const declared = methodNames(chains).flatMap((methodKey) => {
    const method = declaredMethod(chains, methodKey, metadata);
    return method ? [{ methodKey, method, name: metadata.getMethodMetadata(method)!.name }] : [];
  });
  if (declared.length === 0) return undefined;
  const unanswered = (methodKey: string, name: string, why: string) => `${original?.name ?? String(wrapper.token)}.${methodKey} ("${name}") has no handler: ${why}`;
  const host = { key: prototype, classRef: plain ? original : (prototype.constructor as { name: string }), prototype };

  if (isScoped && (plain || !fromClass)) {
    // A request-scoped replacement exists only per request: nothing to route to at startup.
    const why = `the provider is request-scoped and replaced by ${replacedBy ?? 'a value'}, which cannot be routed before a request. Replace it with a subclass (useClass).`;
    return { ...host, instance: undefined, methods: [], problems: declared.map(({ methodKey, name }) => unanswered(methodKey, name, why)) };
  }
  // Where the methods are looked up and called on: the replacement object; undefined means the
  // instance Nest calls the handler on (a class Nest instantiates, singleton or request-scoped).
  const target = fromClass && !plain ? undefined : ((fromClass ? wrapper.instance : value) as Record<string, unknown>);
  const methods: RpcHostMethod[] = [];
  const problems: string[] = [];
  for (const { methodKey, method, name } of declared) {
    const called = (target ?? (implementation as Record<string, unknown>))[methodKey];
    if (typeof called === 'function') {
      methods.push({ methodKey, declared: method, handler: called === method ? method : answeredBy(called as Handler, method, target, methodKey) });
    } else {
      const why = `the provider is replaced by ${replacedBy} without a function ${methodKey}, so "${name}" could not be answered. Give the replacement a ${methodKey}() method (a mock function will do).`;
      problems.push(unanswered(methodKey, name, why));
    }
  }
  return {
    ...host,
    // Nest's context creator finds the module and the class-level enhancers through the class of
    // the object it is given: for a plain replacement, an object of the original class stands in
    // (the handler calls the replacement, whatever `this` it gets).
    instance: isScoped ? undefined : plain ? Object.create(original.prototype) : ((target as object | undefined) ?? (wrapper.instance as object)),
    methods,
    problems,
  };
}

/** What replaced the provider registered under a class token, in words; undefined when it was not replaced. */
function replacementOf(wrapper: InstanceWrapper, fromClass: boolean): string | undefined {
  const token = wrapper.token;
  if (typeof token !== 'function') return undefined;
  if (fromClass) return wrapper.metatype === token ? undefined : `the class ${(wrapper.metatype as { name: string }).name}`;
  return wrapper.isFactory ? "a factory's value" : 'a value';
}

function inChain(prototype: object, start: object): boolean {
  for (let p: object | null = start; p !== null; p = Object.getPrototypeOf(p)) if (p === prototype) return true;
  return false;
}

/** Every method name along the prototype chains, Object.prototype's left out. */
function methodNames(chains: readonly object[]): string[] {
  const names = new Set<string>();
  for (const start of chains) {
    for (let p: object | null = start; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      for (const key of Object.getOwnPropertyNames(p)) {
        if (key !== 'constructor' && typeof Object.getOwnPropertyDescriptor(p, key)?.value === 'function') names.add(key);
      }
    }
  }
  return [...names];
}

/** The nearest function named `methodKey` along the chains that carries `@RpcMethod`. */
function declaredMethod(chains: readonly object[], methodKey: string, metadata: RpcMetadataAccessor): Handler | undefined {
  for (const start of chains) {
    for (let p: object | null = start; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      const value = Object.getOwnPropertyDescriptor(p, methodKey)?.value;
      if (typeof value === 'function' && metadata.getMethodMetadata(value)) return value as Handler;
    }
  }
  return undefined;
}

/**
 * The replacement's method, called on the replacement (`target`, else the instance Nest calls the
 * handler on), under the declared method's name and metadata.
 */
function answeredBy(replacement: Handler, declared: Handler, target: object | undefined, methodKey: string): Handler {
  const handler = function (this: unknown, ...args: unknown[]): unknown {
    return replacement.apply(target ?? this, args);
  };
  Object.defineProperty(handler, 'name', { value: methodKey });
  RpcMetadataAccessor.copyHandlerMetadata(declared, handler);
  return handler;
}
