import { ExecutionContext, ForbiddenException, NotFoundException } from '@nestjs/common';
import type { Site } from '@app/db';
import { InvalidParametersException } from '@app/common';
import { AccessRepository, SiteLookup } from './access.repository';
import { SiteAccessGuard } from './site-access.guard';
import { parseSiteId } from './site-id';

describe(parseSiteId.name, () => {
  it.each([
    ['1', 1],
    ['4294967295', 4294967295],
    ['4294967296', undefined],
    ['0', undefined],
    ['01', undefined],
    ['-1', undefined],
    ['1.0', undefined],
    ['1e3', undefined],
    ['abc', undefined],
    [undefined, undefined],
  ])('%s → %s', (raw, expected) => {
    expect(parseSiteId(raw)).toBe(expected);
  });
});

describe(SiteAccessGuard.name, () => {
  const site = { id: 5, timezone: 'UTC' } as Site;
  let access: jest.Mocked<Pick<AccessRepository, 'findSite' | 'isMember'>>;

  const run = (id: string, siteLookup?: SiteLookup) => {
    const req: Record<string, unknown> = { params: { id }, principal: { keyId: 1, userId: 9 }, siteLookup };
    const ctx = { switchToHttp: () => ({ getRequest: () => req }) } as unknown as ExecutionContext;
    const sut = new SiteAccessGuard(access as unknown as AccessRepository);
    return { req, result: sut.canActivate(ctx) };
  };

  beforeEach(() => {
    access = { findSite: jest.fn(), isMember: jest.fn() };
  });

  it('answers 400 naming id for a non-numeric id, before any lookup', async () => {
    await expect(run('x').result).rejects.toThrow(InvalidParametersException);
    expect(access.findSite).not.toHaveBeenCalled();
  });

  it('answers 404 when the site does not exist, before checking membership', async () => {
    access.findSite.mockResolvedValue(null);
    await expect(run('5').result).rejects.toThrow(NotFoundException);
    expect(access.isMember).not.toHaveBeenCalled();
  });

  it('answers 403 when the user is not a member', async () => {
    access.findSite.mockResolvedValue(site);
    access.isMember.mockResolvedValue(false);
    await expect(run('5').result).rejects.toThrow(ForbiddenException);
    expect(access.isMember).toHaveBeenCalledWith(5, 9);
  });

  it('attaches the site for members', async () => {
    access.findSite.mockResolvedValue(site);
    access.isMember.mockResolvedValue(true);
    const { req, result } = run('5');
    await expect(result).resolves.toBe(true);
    expect(req.site).toBe(site);
  });

  describe('with the site looked up with the key (ApiKeyGuard)', () => {
    const lookup = (over: Partial<SiteLookup>): SiteLookup => ({
      id: 5,
      site,
      member: true,
      dataVersion: '3.0:0.0:0',
      ...over,
    });

    it('uses it and reads nothing more', async () => {
      const { req, result } = run('5', lookup({}));
      await expect(result).resolves.toBe(true);
      expect(req.site).toBe(site);
      expect(access.findSite).not.toHaveBeenCalled();
      expect(access.isMember).not.toHaveBeenCalled();
    });

    it('answers 404 and 403 from it in the same order', async () => {
      await expect(run('5', lookup({ site: null, member: false })).result).rejects.toThrow(NotFoundException);
      await expect(run('5', lookup({ member: false })).result).rejects.toThrow(ForbiddenException);
      expect(access.findSite).not.toHaveBeenCalled();
    });

    it('looks the site up itself when the lookup is of another id', async () => {
      access.findSite.mockResolvedValue(null);
      await expect(run('6', lookup({})).result).rejects.toThrow(NotFoundException);
      expect(access.findSite).toHaveBeenCalledWith(6);
    });
  });
});
