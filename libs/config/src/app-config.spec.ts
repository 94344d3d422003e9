import path from 'node:path';
import { ConfigError, loadConfig } from './app-config';

describe(loadConfig.name, () => {
  it('reads DATABASE_URL and applies the SPEC §5 defaults', () => {
    const config = loadConfig({ DATABASE_URL: 'mysql://app:p%40ss@db.local:3307/stats' });
    expect(config.database).toEqual({
      host: 'db.local',
      port: 3307,
      user: 'app',
      password: 'p@ss',
      database: 'stats',
    });
    expect(config.apiDatabase).toEqual(config.database);
    expect(config.port).toBe(3000);
    expect(config.limits).toEqual({
      rateLimitPerMinute: 600,
      queryTimeoutMs: 10_000,
      concurrencyPerKey: 4,
      concurrencyPerSite: 6,
      maxRangeDays: 731,
      visitorsExactUpTo: 50_000,
      maxPageSize: 1000,
      funnelMaxSteps: 10,
      funnelStepsMaxBytes: 4096,
    });
  });

  it('accepts DB_* variables instead of a URL', () => {
    expect(loadConfig({ DB_NAME: 'stats', DB_HOST: 'h', DB_PORT: '3310' }).database).toEqual({
      host: 'h',
      port: 3310,
      user: 'root',
      password: '',
      database: 'stats',
    });
  });

  it('selects the embedded SQLite engine at data/stats.sqlite when nothing is configured', () => {
    const config = loadConfig({});
    expect(config.engine).toBe('sqlite');
    expect(config.embedded).toEqual({ path: path.resolve('data/stats.sqlite') });
  });

  it('selects the embedded SQLite engine at SQLITE_PATH when no server is named', () => {
    const config = loadConfig({ SQLITE_PATH: 'data/x.sqlite' });
    expect(config.engine).toBe('sqlite');
    expect(config.embedded).toEqual({ path: path.resolve('data/x.sqlite') });
    expect(loadConfig({ SQLITE_PATH: 'data/x.sqlite', DATABASE_URL: 'mysql://h/db' }).engine).toBe('mysql');
    expect(loadConfig({ SQLITE_PATH: 'data/x.sqlite', DB_NAME: 'stats' }).embedded).toBeUndefined();
  });

  it.each([
    [{ SQLITE_PATH: 'x.sqlite', API_DATABASE_URL: 'mysql://ro@h/db' }, 'API_DATABASE_URL'],
    [{ SQLITE_PATH: 'x.sqlite', API_DATABASE_REPLICA_URLS: 'mysql://ro@r/db' }, 'API_DATABASE_REPLICA_URLS'],
    [{ DATABASE_URL: 'postgres://x/y' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'mysql://h/db', PORT: 'eighty' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://h/db', PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://h/db', MAX_RANGE_DAYS: '0' }, 'MAX_RANGE_DAYS'],
    [{ DATABASE_URL: 'mysql://h/db', LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
  ])('stops with one line naming the bad variable: %p', (env, variable) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
    expect((error as ConfigError).message).toMatch(new RegExp(`^Configuration error: ${variable} `));
    expect((error as ConfigError).message).not.toContain('\n');
  });
});
