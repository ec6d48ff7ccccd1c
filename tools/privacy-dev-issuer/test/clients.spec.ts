import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientsFilePath, readClients, registerClient } from '../src';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dev-issuer-clients-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('registering a client', () => {
  it('when a client is registered, then the clients file holds its public key only and the private key is returned', async () => {
    const made = await registerClient(dir, { clientId: 'my-system', scopes: ['read', 'write'] });
    expect(made.privateJwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256' });
    expect(made.privateJwk.d).toBeDefined();
    const text = await readFile(clientsFilePath(dir), 'utf8');
    expect(text).not.toContain(made.privateJwk.d as string);
    const { clients } = await readClients(clientsFilePath(dir));
    expect(clients).toEqual([
      {
        client_id: 'my-system',
        scopes: ['read', 'write'],
        dpop_bound_access_tokens: true,
        jwks: {
          keys: [expect.objectContaining({ kid: made.privateJwk.kid, x: made.privateJwk.x })],
        },
      },
    ]);
  });

  it('when a client id is registered again, then it is replaced with the new key and the others stay', async () => {
    const first = await registerClient(dir, { clientId: 'a', scopes: ['read'] });
    await registerClient(dir, { clientId: 'b', scopes: ['admin'] });
    const second = await registerClient(dir, {
      clientId: 'a',
      scopes: ['write'],
      dpopBound: false,
    });
    const { clients } = await readClients(clientsFilePath(dir));
    expect(clients.map((c) => c.client_id).sort()).toEqual(['a', 'b']);
    const a = clients.find((c) => c.client_id === 'a');
    expect(a?.scopes).toEqual(['write']);
    expect(a?.dpop_bound_access_tokens).toBe(false);
    expect(a?.jwks.keys[0]?.kid).toBe(second.privateJwk.kid);
    expect(second.privateJwk.kid).not.toBe(first.privateJwk.kid);
  });

  it('when a citizen client names a valid identity number, then it is kept as pid; an invalid one is refused', async () => {
    await registerClient(dir, { clientId: 'citizen', scopes: [], pid: '13116900216' });
    const { clients } = await readClients(clientsFilePath(dir));
    expect(clients[0]?.pid).toBe('13116900216');
    await expect(
      registerClient(dir, { clientId: 'bad', scopes: [], pid: '13116950216' }),
    ).rejects.toThrow(/pid/);
    await expect(registerClient(dir, { clientId: 'bad id!', scopes: [] })).rejects.toThrow(
      /client id/,
    );
  });
});
