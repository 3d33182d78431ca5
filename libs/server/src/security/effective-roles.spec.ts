import { resolveEffectiveRoles, type RolesPolicy } from './effective-roles.js';

const policy: RolesPolicy = {
  rolesMatch: 'any',
  defaultRoles: ['member'],
  publicMethods: ['admin.health'],
  publicPrefixes: ['public.', 'admin.open.'],
  prefixRoles: { 'admin.': ['admin'], 'admin.users.': ['hr'], 'admin.users.audit.': ['auditor'] },
};

describe('resolveEffectiveRoles', () => {
  const resolve = (name: string, own = {}) => {
    const r = resolveEffectiveRoles(name, own, policy);
    return [r.source, r.roles, r.rolesMatch];
  };

  it('applies the first matching rule in the documented order', () => {
    expect(resolve('admin.health', { roles: ['x'], rolesMatch: 'all' })).toEqual(['method', ['x'], 'all']);
    expect(resolve('admin.health')).toEqual(['public-method', [], 'any']);
    expect(resolve('admin.open.thing')).toEqual(['public-prefix', [], 'any']);
    expect(resolve('admin.users.audit.log')).toEqual(['prefix', ['auditor'], 'any']);
    expect(resolve('admin.users.list')).toEqual(['prefix', ['hr'], 'any']);
    expect(resolve('admin.x')).toEqual(['prefix', ['admin'], 'any']);
    expect(resolve('shop.buy')).toEqual(['default', ['member'], 'any']);
    expect(resolveEffectiveRoles('x', {}, { ...policy, defaultRoles: [] }).source).toBe('public');
  });

  it('an explicit empty roles list makes the method public', () => {
    expect(resolve('admin.x', { roles: [] })).toEqual(['method', [], 'any']);
  });

  it('returns frozen values', () => {
    const r = resolveEffectiveRoles('admin.x', {}, policy);
    expect(Object.isFrozen(r)).toBe(true);
    expect(Object.isFrozen(r.roles)).toBe(true);
  });
});
