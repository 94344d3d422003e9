import { ConfigError, loadConfig } from './app-config';

const base = { DATABASE_URL: 'mysql://root@127.0.0.1:3306/stats' };

describe(`${loadConfig.name}: reliability and security settings`, () => {
  it('defaults: no Redis, CORS off, 8 KB URLs, 10 s to drain, no proxy trusted, 500 ms connect timeout', () => {
    const config = loadConfig(base);
    expect(config.redis).toEqual({ url: undefined, keyPrefix: 'stats-api:' });
    expect(config.http).toEqual({
      corsOrigins: [],
      maxUrlBytes: 8192,
      trustProxy: false,
      shutdownTimeoutMs: 10_000,
    });
    expect(config.dbReliability).toEqual({
      queueLimit: 1000,
      healthIntervalMs: 1000,
      apiUserHost: '%',
      allowPrivilegedUser: false,
    });
    expect(config.dbConnectTimeoutMs).toBe(500);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      ...base,
      REDIS_URL: 'redis://cache:6379/2',
      REDIS_KEY_PREFIX: 'prod:',
      CORS_ORIGINS: 'https://a.example, https://b.example,',
      MAX_URL_BYTES: '4096',
      TRUST_PROXY: '2',
      SHUTDOWN_TIMEOUT_MS: '30000',
      DB_QUEUE_LIMIT: '50',
      DB_HEALTH_INTERVAL_MS: '2000',
      API_DB_USER_HOST: '10.0.%',
      ALLOW_PRIVILEGED_DB_USER: 'true',
    });
    expect(config.redis).toEqual({ url: 'redis://cache:6379/2', keyPrefix: 'prod:' });
    expect(config.http).toEqual({
      corsOrigins: ['https://a.example', 'https://b.example'],
      maxUrlBytes: 4096,
      trustProxy: 2,
      shutdownTimeoutMs: 30_000,
    });
    expect(config.dbReliability).toEqual({
      queueLimit: 50,
      healthIntervalMs: 2000,
      apiUserHost: '10.0.%',
      allowPrivilegedUser: true,
    });
  });

  it.each([
    ['true', true],
    ['false', false],
    ['loopback', 'loopback'],
    ['10.0.0.0/8, 192.168.1.1', '10.0.0.0/8, 192.168.1.1'],
  ])('reads TRUST_PROXY=%s', (value, expected) => {
    expect(loadConfig({ ...base, TRUST_PROXY: value }).http.trustProxy).toEqual(expected);
  });

  it.each([
    ['REDIS_URL', 'http://cache'],
    ['REDIS_KEY_PREFIX', 'has space'],
    ['MAX_URL_BYTES', '10'],
    ['TRUST_PROXY', 'everyone'],
    ['SHUTDOWN_TIMEOUT_MS', '-1'],
    ['DB_HEALTH_INTERVAL_MS', '5'],
    ['API_DB_USER_HOST', "'; DROP USER root; --"],
  ])('stops at boot naming %s when it is %p', (variable, value) => {
    expect(() => loadConfig({ ...base, [variable]: value })).toThrow(ConfigError);
    try {
      loadConfig({ ...base, [variable]: value });
    } catch (e) {
      expect((e as ConfigError).variable).toBe(variable);
    }
  });
});

describe(`${loadConfig.name}: report concurrency caps`, () => {
  it('defaults to 4 report requests per key and 6 per site, and reads both variables', () => {
    expect(loadConfig(base).limits).toMatchObject({ concurrencyPerKey: 4, concurrencyPerSite: 6 });
    expect(
      loadConfig({ ...base, REPORT_CONCURRENCY_PER_KEY: '2', REPORT_CONCURRENCY_PER_SITE: '3' }).limits,
    ).toMatchObject({ concurrencyPerKey: 2, concurrencyPerSite: 3 });
  });

  it.each([
    ['REPORT_CONCURRENCY_PER_KEY', '0'],
    ['REPORT_CONCURRENCY_PER_KEY', 'many'],
    ['REPORT_CONCURRENCY_PER_SITE', '1001'],
    ['REPORT_CONCURRENCY_PER_SITE', '2.5'],
  ])('refuses %s=%s with a ConfigError naming it', (variable, value) => {
    expect(() => loadConfig({ ...base, [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, [variable]: value })).toThrow(
      new RegExp(`^Configuration error: ${variable} `),
    );
  });
});
