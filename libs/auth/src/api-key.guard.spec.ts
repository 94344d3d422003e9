import { ExecutionContext, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { ApiKey } from '@app/db';
import { AccessRepository } from './access.repository';
import { ApiKeyGuard } from './api-key.guard';
import { generateApiKey } from './api-key';
import type { AuthenticatedRequest } from './principal';

function contextFor(
  req: Partial<AuthenticatedRequest>,
  isPublic = false,
): { ctx: ExecutionContext; reflector: Reflector } {
  const reflector = { getAllAndOverride: jest.fn().mockReturnValue(isPublic) } as unknown as Reflector;
  const ctx = {
    getHandler: () => undefined,
    getClass: () => undefined,
    switchToHttp: () => ({ getRequest: () => req }),
  } as unknown as ExecutionContext;
  return { ctx, reflector };
}

/** The problem body the ProblemFilter will send, carried by the exception. */
const withDetail = (detail: RegExp) => ({
  response: expect.objectContaining({ status: 401, detail: expect.stringMatching(detail) }),
});

function keyRow(overrides: Partial<ApiKey> = {}): ApiKey {
  return {
    id: 7,
    userId: 3,
    name: 'k',
    prefix: 'sk_abc',
    keyHash: 'x',
    createdAt: new Date(),
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
    ...overrides,
  };
}

describe(ApiKeyGuard.name, () => {
  const secret = generateApiKey();
  let access: jest.Mocked<Pick<AccessRepository, 'findKey' | 'touchKey'>>;

  beforeEach(() => {
    access = { findKey: jest.fn(), touchKey: jest.fn().mockResolvedValue(undefined) };
  });

  const run = async (
    authorization: string | undefined,
    isPublic = false,
    params: Record<string, string> = {},
  ) => {
    const req: Partial<AuthenticatedRequest> = {
      headers: authorization === undefined ? {} : { authorization },
      params,
    };
    const { ctx, reflector } = contextFor(req, isPublic);
    const sut = new ApiKeyGuard(reflector, access as unknown as AccessRepository);
    const result = await sut.canActivate(ctx);
    return { result, req, sut, ctx };
  };

  it('lets public routes through without a key', async () => {
    await expect(run(undefined, true)).resolves.toMatchObject({ result: true });
    expect(access.findKey).not.toHaveBeenCalled();
  });

  it.each([
    [undefined, /Bearer/],
    ['Basic Zm9vOmJhcg==', /Bearer scheme/],
    ['Bearer short', /malformed/],
  ])('rejects %s with 401 without a database lookup', async (header, message) => {
    await expect(run(header)).rejects.toThrow(UnauthorizedException);
    await expect(run(header)).rejects.toMatchObject(withDetail(message));
    expect(access.findKey).not.toHaveBeenCalled();
  });

  it('looks the key up by its SHA-256 hash, never by the key itself', async () => {
    access.findKey.mockResolvedValue(keyRow());
    await run(`Bearer ${secret.key}`);
    expect(access.findKey).toHaveBeenCalledWith(secret.hash, undefined);
  });

  it("looks the route's site up with the key, in one call, and hands the lookup on", async () => {
    const siteLookup = { id: 5, site: null, member: false, dataVersion: '1.0:0.0:0' };
    access.findKey.mockResolvedValue({ ...keyRow(), siteLookup });
    const { req } = await run(`Bearer ${secret.key}`, false, { id: '5' });
    expect(access.findKey).toHaveBeenCalledTimes(1);
    expect(access.findKey).toHaveBeenCalledWith(secret.hash, 5);
    expect(req.siteLookup).toBe(siteLookup);
  });

  it('answers 401 for a bad key before a malformed site id, which it does not look up', async () => {
    access.findKey.mockResolvedValue(null);
    await expect(run(`Bearer ${secret.key}`, false, { id: '05' })).rejects.toThrow(UnauthorizedException);
    expect(access.findKey).toHaveBeenCalledWith(secret.hash, undefined);
  });

  it('rejects unknown, revoked and expired keys with 401', async () => {
    access.findKey.mockResolvedValueOnce(null);
    await expect(run(`Bearer ${secret.key}`)).rejects.toMatchObject(withDetail(/not valid/));
    access.findKey.mockResolvedValueOnce(keyRow({ revokedAt: new Date() }));
    await expect(run(`Bearer ${secret.key}`)).rejects.toMatchObject(withDetail(/revoked/));
    access.findKey.mockResolvedValueOnce(keyRow({ expiresAt: new Date(Date.now() - 1) }));
    await expect(run(`Bearer ${secret.key}`)).rejects.toMatchObject(withDetail(/expired/));
  });

  it('accepts a key that expires in the future and sets the principal', async () => {
    access.findKey.mockResolvedValue(keyRow({ expiresAt: new Date(Date.now() + 60_000) }));
    const { result, req } = await run(`Bearer ${secret.key}`);
    expect(result).toBe(true);
    expect(req.principal).toEqual({ keyId: 7, userId: 3 });
  });

  it('writes last_used_at once per minute per key, not on every request', async () => {
    access.findKey.mockResolvedValue(keyRow());
    const req = { headers: { authorization: `Bearer ${secret.key}` } };
    const { ctx, reflector } = contextFor(req);
    const sut = new ApiKeyGuard(reflector, access as unknown as AccessRepository);
    await sut.canActivate(ctx);
    await sut.canActivate(ctx);
    await sut.canActivate(ctx);
    expect(access.touchKey).toHaveBeenCalledTimes(1);
  });

  it('does not fail the request when recording last use fails', async () => {
    access.findKey.mockResolvedValue(keyRow());
    access.touchKey.mockRejectedValue(new Error('read-only'));
    await expect(run(`Bearer ${secret.key}`)).resolves.toMatchObject({ result: true });
  });
});
