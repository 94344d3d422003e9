import type { Request, Response } from 'express';
import { requestTargetMiddleware } from './request-target.middleware';

function exchange(url: string) {
  const res = {
    statusCode: 200,
    body: undefined as string | undefined,
    contentType: undefined as string | undefined,
    setHeader(name: string, value: string) {
      // The media type, without parameters (charset).
      if (name.toLowerCase() === 'content-type') this.contentType = value.split(';')[0];
      return this;
    },
    removeHeader: jest.fn(),
    status(code: number) {
      this.statusCode = code;
      return this;
    },
    type(t: string) {
      this.contentType = t;
      return this;
    },
    send(b: string) {
      this.body = b;
      return this;
    },
    end(b: string) {
      this.body = b;
      return this;
    },
  };
  const next = jest.fn();
  const path = url.split('?')[0];
  requestTargetMiddleware({ maxUrlBytes: 64 })(
    { originalUrl: url, url, path } as unknown as Request,
    res as unknown as Response,
    next,
  );
  return {
    res,
    next,
    body: res.body ? (JSON.parse(res.body) as { status: number; errors?: unknown[] }) : undefined,
  };
}

describe(requestTargetMiddleware.name, () => {
  it.each(['/api/v1/sites', '/api/v1/sites?limit=10&page=2', '/api/v1/sites/1?steps=%5B%5D&x=caf%C3%A9+ok'])(
    'passes %s on',
    (url) => {
      expect(exchange(url).next).toHaveBeenCalled();
    },
  );

  it('answers a target over the limit with a 414 problem', () => {
    const { res, next, body } = exchange(`/api/v1/sites?x=${'a'.repeat(60)}`);
    expect(next).not.toHaveBeenCalled();
    expect(res.statusCode).toBe(414);
    expect(res.contentType).toBe('application/problem+json');
    expect(body).toMatchObject({ status: 414, title: 'URI Too Long' });
  });

  it.each([
    ['/api/v1/sites/%E0%A4%A', 'path'],
    ['/api/v1/%', 'path'],
    ['/api/v1/sites?limit=%ZZ', 'limit'],
    ['/api/v1/sites?%C3=1', '%C3'],
    ['/api/v1/sites?=%', '(unnamed)'],
    ['/api/v1/sites?a%20b=%', 'a b'],
  ])('answers a malformed percent-encoding in %s with a 400 naming %s', (url, parameter) => {
    const { res, next, body } = exchange(url);
    expect(next).not.toHaveBeenCalled();
    expect(res.statusCode).toBe(400);
    expect(body!.errors).toEqual([
      { parameter, message: expect.stringContaining('malformed percent-encoding') },
    ]);
  });
});
