import { ConfigError, loadConfig } from './app-config';

const base = { DATABASE_URL: 'mysql://root@127.0.0.1:3306/stats' };

describe(`${loadConfig.name}: read replicas`, () => {
  it('has none by default, and a 30-s lag limit', () => {
    expect(loadConfig(base).replicas).toEqual({ locations: [], maxLagSeconds: 30 });
  });

  it('reads API_DATABASE_REPLICA_URLS as comma-separated locations and REPLICA_MAX_LAG_SECONDS', () => {
    const config = loadConfig({
      ...base,
      API_DATABASE_REPLICA_URLS: 'mysql://api:s%40cret@replica-1:3307/stats, mariadb://api@replica-2/stats,',
      REPLICA_MAX_LAG_SECONDS: '5',
    });
    expect(config.replicas).toEqual({
      locations: [
        { host: 'replica-1', port: 3307, user: 'api', password: 's@cret', database: 'stats' },
        { host: 'replica-2', port: 3306, user: 'api', password: '', database: 'stats' },
      ],
      maxLagSeconds: 5,
    });
  });

  it.each([
    ['API_DATABASE_REPLICA_URLS', 'replica-1:3306'],
    ['API_DATABASE_REPLICA_URLS', 'mysql://replica-1/stats,http://replica-2/stats'],
    ['API_DATABASE_REPLICA_URLS', 'mysql://replica-1'],
    ['REPLICA_MAX_LAG_SECONDS', '0'],
    ['REPLICA_MAX_LAG_SECONDS', 'soon'],
  ])('stops at boot naming %s when it is %p', (variable, value) => {
    expect(() => loadConfig({ ...base, [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, [variable]: value })).toThrow(
      new RegExp(`^Configuration error: ${variable} `),
    );
  });
});
