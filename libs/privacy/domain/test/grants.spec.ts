import type { Caller } from '@nhp/privacy-contracts';
import { AppError } from '@nhp/shared-errors';
import { createGrantUseCases, type AuditContext, type Grant, type GrantStore } from '../src';

const operator: Caller = { clientId: undefined, isAdmin: true, operator: 'privacy-admin:ops' };

/** In-memory ports: the use cases' rules, without storage (the repository has its own tests). */
function ports(parts: string[]) {
  const writes: Array<{ op: string; audit: AuditContext }> = [];
  const grants = new Map<string, Grant>();
  const store: GrantStore = {
    allows: async () => false,
    set: async (clientId, partKode, rights, audit) => {
      writes.push({ op: 'set', audit });
      const grant = { clientId, partKode, ...rights, updatedAt: new Date(0) };
      grants.set(`${clientId}/${partKode}`, grant);
      return grant;
    },
    revoke: async (clientId, partKode, audit) => {
      writes.push({ op: 'revoke', audit });
      return grants.delete(`${clientId}/${partKode}`);
    },
    list: async (filter = {}) =>
      [...grants.values()].filter(
        (g) => filter.clientId === undefined || g.clientId === filter.clientId,
      ),
  };
  return {
    useCases: createGrantUseCases({
      parts: { exists: async (p) => parts.includes(p) },
      grants: store,
    }),
    writes,
  };
}

describe('grant use cases', () => {
  it('when the party exists, then the grant is set with the operator named as admin in its audit record', async () => {
    const { useCases, writes } = ports(['studie']);
    const grant = await useCases.grant(operator, {
      clientId: 'client-a',
      partKode: 'studie',
      read: true,
      write: false,
    });
    expect(grant).toMatchObject({
      clientId: 'client-a',
      partKode: 'studie',
      read: true,
      write: false,
    });
    expect(writes).toEqual([
      { op: 'set', audit: { actor: { kind: 'admin', id: 'privacy-admin:ops' } } },
    ]);
    expect(await useCases.list(operator, { clientId: 'client-a' })).toHaveLength(1);
    expect(await useCases.list(operator, { clientId: 'client-b' })).toHaveLength(0);
  });

  it('when the party does not exist, then EPVK-102404 and nothing is written', async () => {
    const { useCases, writes } = ports([]);
    const refused = await useCases
      .grant(operator, { clientId: 'client-a', partKode: 'ukjent', read: true, write: true })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('EPVK-102404');
    expect(writes).toEqual([]);
  });

  it('when a grant is revoked twice, then the second revoke says there was nothing to withdraw', async () => {
    const { useCases } = ports(['studie']);
    await useCases.grant(operator, { clientId: 'c', partKode: 'studie', read: true, write: true });
    expect(await useCases.revoke(operator, { clientId: 'c', partKode: 'studie' })).toBe(true);
    expect(await useCases.revoke(operator, { clientId: 'c', partKode: 'studie' })).toBe(false);
  });

  it('when a system token calls, then its audit record names the client, not an admin', async () => {
    const { useCases, writes } = ports(['studie']);
    await useCases.grant(
      { clientId: 'system-x', isAdmin: true },
      { clientId: 'c', partKode: 'studie', read: true, write: true },
    );
    expect(writes[0]?.audit.actor).toEqual({ kind: 'client', id: 'system-x' });
  });
});
